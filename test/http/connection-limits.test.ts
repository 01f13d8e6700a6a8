import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConnectionLimits, openFileLimit } from '../../src/http/connection-limits.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** Opens `count` idle connections from `localAddress`; resolves once each is open or closed. */
async function openIdle(port: number, localAddress: string, count: number) {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve) => {
          const socket = net.connect({ port, host: '127.0.0.1', localAddress });
          socket.on('error', () => undefined);
          socket.once('connect', () => resolve(socket));
        }),
    ),
  );
  // The server closes refused ones at once; give it a moment to do so.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return sockets;
}

describe('open connections are capped, per process and per client address', () => {
  let server: TestServer;
  let port: number;
  beforeAll(async () => {
    server = await startServer({ config: { connectionLimits: { max: 40, perAddress: 10 } } });
    port = Number(new URL(server.url).port);
  });
  afterAll(() => server.close());

  it('one address holding idle connections cannot stop another address being served', async () => {
    const hog = await openIdle(port, '127.0.0.2', 25);
    const open = hog.filter((socket) => !socket.destroyed && !socket.readableEnded);
    expect(open.length).toBe(10);
    const health = await fetch(`${server.url}/api/health`);
    expect(health.status).toBe(200);
    expect(server.logs.join('')).toContain('connection limit reached');
    for (const socket of hog) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Room again once they are gone.
    const again = await openIdle(port, '127.0.0.2', 5);
    expect(again.filter((socket) => !socket.readableEnded && !socket.destroyed).length).toBe(5);
    for (const socket of again) socket.destroy();
  });

  it('the process-wide cap holds however many addresses connect', async () => {
    const batches = await Promise.all(
      ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'].map((address) =>
        openIdle(port, address, 10),
      ),
    );
    const all = batches.flat();
    const open = all.filter((socket) => !socket.destroyed && !socket.readableEnded);
    expect(open.length).toBeLessThanOrEqual(40);
    expect(open.length).toBeGreaterThanOrEqual(35);
    for (const socket of all) socket.destroy();
  });
});

describe('connection limit defaults', () => {
  it('come from the descriptor limit: most of it in all, an eighth per address', () => {
    const limits = (text: string) => defaultConnectionLimits(openFileLimit(() => text));
    expect(
      limits('Max open files            20000                20000                files     \n'),
    ).toEqual({ max: 16000, perAddress: 2000 });
    expect(limits('nothing useful')).toEqual({ max: 819, perAddress: 102 });
    expect(defaultConnectionLimits(10)).toEqual({ max: 64, perAddress: 8 });
  });
});
