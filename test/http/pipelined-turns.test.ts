import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedServer } from '../../src/http/listener-guard.js';

/*
 * One connection's read may not hold the event loop for every request it pipelined: Node hands
 * over all the requests of one read at once, and they are handled one per turn of the loop, so
 * another client's request is handled between them. Over real sockets, on the guard every
 * listener of the service is built with.
 */

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

describe('pipelined requests share the loop', () => {
  const handled: string[] = [];
  let sendOther: () => void = () => undefined;
  let port: number;
  const { server } = guardedServer(
    { requestTimeoutMs: 10_000, connectionTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 },
    (request, response) => {
      handled.push(request.url ?? '');
      // The other client speaks only once the pipeline's first request is being handled.
      if (request.url === '/pipelined/0') sendOther();
      response.end('ok');
    },
  );

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connect = () =>
    new Promise<net.Socket>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' }, () => resolve(socket));
      socket.resume();
    });

  /** Resolves once `socket` has had `count` answers. */
  const answers = (socket: net.Socket, count: number) =>
    new Promise<void>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (text.split('HTTP/1.1 200').length - 1 >= count) resolve();
      });
    });

  it("another client's request is handled before the last of ten pipelined in one write", async () => {
    const other = await connect();
    const pipelining = await connect();
    const answered = Promise.all([answers(other, 1), answers(pipelining, 10)]);
    sendOther = () => other.write(get('/other'));
    pipelining.write(Array.from({ length: 10 }, (_, n) => get(`/pipelined/${n}`)).join(''));
    // Every answer, rather than a fixed wait for the last of the ten.
    await answered;
    other.destroy();
    pipelining.destroy();
    expect(handled.filter((url) => url.startsWith('/pipelined/'))).toEqual(
      Array.from({ length: 10 }, (_, n) => `/pipelined/${n}`),
    );
    // Handled all at once, the ten would come before it.
    expect(handled.indexOf('/other')).toBeLessThan(handled.indexOf('/pipelined/9'));
  });
});
