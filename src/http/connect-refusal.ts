import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from './errors.js';
import { jsonSecurityHeaders } from './security-headers.js';

/**
 * The server's `connect` listener. Node hands a CONNECT request (a proxy tunnel) to that event
 * instead of the request handler, and with no listener destroys the socket without a word:
 * the client sees a dropped connection. Gatehouse is no proxy: it answers 405 in the error
 * catalogue's shape, with the security headers, and closes the connection (whatever bytes
 * follow the request head belong to a tunnel that will not be opened).
 */
export function createConnectRefusal(publicIsHttps: boolean) {
  const body = JSON.stringify(errorBody('method_not_allowed'));
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    allow: 'GET, HEAD, POST',
    ...jsonSecurityHeaders(publicIsHttps),
    'cache-control': 'no-store',
    connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const answer = `HTTP/1.1 405 ${http.STATUS_CODES[405]}\r\n${head}\r\n${body}`;
  return (_request: IncomingMessage, socket: Duplex): void => {
    // A reset connection has nobody left to answer.
    socket.on('error', () => socket.destroy());
    if (socket.writable) socket.end(answer);
    else socket.destroy();
  };
}
