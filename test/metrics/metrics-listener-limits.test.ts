import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerProcess } from '../helpers/processes.js';
import { startGatehouse } from '../helpers/metrics.js';

/** Opens `count` connections from `localAddress` that send nothing. */
async function openIdle(port: number, localAddress: string, count: number) {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve) => {
          const socket = net.connect({ port, host: '127.0.0.1', localAddress });
          socket.on('error', () => resolve(socket));
          socket.once('connect', () => resolve(socket));
        }),
    ),
  );
  return sockets;
}

const stillOpen = (sockets: net.Socket[]) =>
  sockets.filter((socket) => !socket.destroyed && !socket.readableEnded).length;

describe('the metrics listener has the public listener’s protections', () => {
  let dataDir: string;
  let server: ServerProcess;
  let port: number;
  let metricsPort: number;
  let metricsUrl: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-metrics-limits-'));
    ({ server, port, metricsPort, metricsUrl } = await startGatehouse(dataDir, {
      // Long enough that the cap, not the timeout, is what closes the excess (polled for up to
      // 4 s below), short enough that the timeout's own test does not wait long.
      REQUEST_TIMEOUT_MS: '6000',
      MAX_CONNECTIONS: '200',
      MAX_CONNECTIONS_PER_ADDRESS: '200',
    }));
  });
  afterAll(async () => {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('idle connections to it are capped, and the public port and the scraper are still served', async () => {
    // More than the public port's whole cap, from one address.
    const idle = await openIdle(metricsPort, '127.0.0.2', 300);
    // Polled: a loaded machine may close the excess late.
    await expect.poll(() => stillOpen(idle), { timeout: 4_000 }).toBeLessThanOrEqual(64);
    const health = await fetch(`http://127.0.0.1:${port}/api/health`);
    expect(health.status).toBe(200);
    const scrape = await fetch(metricsUrl);
    expect(scrape.status).toBe(200);
    await scrape.text();
    for (const socket of idle) socket.destroy();
  });

  it('a connection that sends no request is closed after the request timeout', async () => {
    const idle = await openIdle(metricsPort, '127.0.0.3', 5);
    expect(stillOpen(idle)).toBe(5);
    // REQUEST_TIMEOUT_MS 6 s, checked every second (Node's default: 60 s, then 300 s): polled,
    // well short of the default.
    await expect.poll(() => stillOpen(idle), { timeout: 20_000, interval: 100 }).toBe(0);
    for (const socket of idle) socket.destroy();
  });
});
