import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { rawErrorAnswer } from './answer.js';

/**
 * The server's `connect` listener. Node hands a CONNECT request (a proxy tunnel) to that event
 * instead of the request handler, and with no listener destroys the socket without a word:
 * the client sees a dropped connection. Gatehouse is no proxy: it answers 405 in the error
 * catalogue's shape, with the security headers, and closes the connection (whatever bytes
 * follow the request head belong to a tunnel that will not be opened).
 */
export function createConnectRefusal(publicIsHttps: boolean) {
  const answer = rawErrorAnswer('method_not_allowed', publicIsHttps, { allow: 'GET, HEAD, POST' });
  return (_request: IncomingMessage, socket: Duplex): void => {
    // A reset connection has nobody left to answer.
    socket.on('error', () => socket.destroy());
    if (socket.writable) socket.end(answer);
    else socket.destroy();
  };
}
