import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { errorCatalogue, type ErrorCode } from './errors.js';
import { rawErrorAnswer } from './answer.js';

function codeFor(error: NodeJS.ErrnoException): ErrorCode {
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'bad_request';
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused (bad framing or header bytes,
 * headers too large, too slow) is answered like every other error, in the catalogue's JSON
 * shape with the security headers, and the connection closed. Only the parser's error code is
 * logged: the error also carries the raw bytes received, which may hold cookies or passwords.
 */
export function createClientErrorHandler(
  publicIsHttps: boolean,
  log: () => FastifyBaseLogger | undefined,
) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const code = codeFor(error);
    const { status } = errorCatalogue[code];
    log()?.info({ parserError: error.code ?? 'unknown', status }, 'request refused by the parser');
    if (socket.writable) socket.end(rawErrorAnswer(code, publicIsHttps));
    socket.destroySoon();
  };
}
