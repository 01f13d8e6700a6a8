import http from 'node:http';
import { errorBody, errorCatalogue, type ErrorCode } from './errors.js';
import { jsonSecurityHeaders } from './security-headers.js';

/**
 * A whole HTTP/1.1 answer as text, for a socket Node hands over before any response object
 * exists (a parser error, CONNECT): the catalogue's JSON body, the security headers, no
 * caching, and `Connection: close`, since what follows on that socket is not a request.
 */
export function rawErrorAnswer(
  code: ErrorCode,
  publicIsHttps: boolean,
  extraHeaders: Record<string, string> = {},
): string {
  const { status } = errorCatalogue[code];
  const body = JSON.stringify(errorBody(code));
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    ...extraHeaders,
    ...jsonSecurityHeaders(publicIsHttps),
    'cache-control': 'no-store',
    connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${head}\r\n${body}`;
}
