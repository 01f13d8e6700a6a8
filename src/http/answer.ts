import http, { type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { errorBody, errorCatalogue, HttpError, type ErrorCode } from './errors.js';

/*
 * What every answer carries, decided here once: the security headers, no caching unless the
 * route chose its own, `Connection: close` while draining, the error catalogue's JSON body, and
 * the 503 a store failure is answered with. Fastify's hooks apply it to every route's answer
 * (installAnswerHooks, with error-handler.ts for the bodies); the answers written in front of
 * Fastify (the session read, the health probe, the request budget's 429, a refusal on a socket
 * with no response object) build their heads with `finishHead`, in the order Fastify writes
 * them: the route's own headers, its cookies, the security headers, caching, the connection,
 * the length. Access lines are http/access-log.ts's.
 */

// Auth.js's remaining built-in page (/api/auth/error): inline styles, images, a form to ourselves.
// Gatehouse's own pages (src/pages/) set a stricter CSP and their own Referrer-Policy, kept below.
const htmlPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
const apiPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";
const hsts = 'max-age=31536000; includeSubDomains';

/** The content type of every JSON answer of ours (Auth.js's own say `application/json`). */
export const jsonType = 'application/json; charset=utf-8';

/** The headers every JSON answer carries, in the order the hook below sets them. */
export function jsonSecurityHeaders(https: boolean): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': apiPolicy,
    ...(https && { 'strict-transport-security': hsts }),
  };
}

/** The same, flat (`[name, value, …]`), made once: Node writes such an array as it is. */
export const securityHead = (https: boolean): readonly string[] =>
  Object.entries(jsonSecurityHeaders(https)).flat();

/**
 * 503 `unavailable` with `Retry-After: 5`: the database could not be reached (or the service is
 * shutting down, in `detail`); the client tries again shortly.
 */
export const storeUnavailable = (detail?: string): HttpError =>
  new HttpError('unavailable', { 'retry-after': '5' }, detail);

/**
 * Fastify's side: security headers on every answer, errors included (HSTS only where the client
 * came over https), `Cache-Control: no-store` unless the route set one, and, while draining,
 * `Connection: close`, so kept-alive sockets do not hold the process open until their idle
 * timeout.
 */
export function installAnswerHooks(
  app: FastifyInstance,
  publicIsHttps: boolean,
  isDraining: () => boolean,
): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    const type = String(reply.getHeader('content-type') ?? '');
    if (!reply.hasHeader('content-security-policy')) {
      reply.header(
        'content-security-policy',
        type.startsWith('text/html') ? htmlPolicy : apiPolicy,
      );
    }
    if (publicIsHttps || request.protocol === 'https') {
      reply.header('strict-transport-security', hsts);
    }
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (isDraining()) reply.header('connection', 'close');
    done(null, payload);
  });
}

/**
 * An answer's head written in front of Fastify, finished as Fastify's hooks and reply finish a
 * route's (above): `head` holds the route's own headers and cookies, flat, and is appended to.
 * `cachingSet`: the route's own headers name its caching.
 */
export function finishHead(
  head: string[],
  security: readonly string[],
  cachingSet: boolean,
  draining: boolean,
  bodyBytes: number,
): string[] {
  for (const part of security) head.push(part);
  if (!cachingSet) head.push('cache-control', 'no-store');
  if (draining) head.push('connection', 'close');
  head.push('content-length', String(bodyBytes));
  return head;
}

/** A catalogue error as the final error handler answers it, head and body. */
export interface ErrorAnswer {
  status: number;
  head: string[];
  body: string;
}

/** The error `code` written in front of Fastify: its own `headers` first, as `sendError` sets them. */
export function errorAnswer(
  code: ErrorCode,
  security: readonly string[],
  draining: boolean,
  { headers = {}, requestId }: { headers?: Record<string, string>; requestId?: string } = {},
): ErrorAnswer {
  const body = JSON.stringify(errorBody(code, requestId));
  const head = Object.entries(headers).flat();
  head.push('content-type', jsonType);
  const bytes = Buffer.byteLength(body);
  return {
    status: errorCatalogue[code].status,
    head: finishHead(head, security, false, draining, bytes),
    body,
  };
}

/** Writes an answer made in front of Fastify: the head and a string body in one write. */
export function writeAnswer(
  response: ServerResponse,
  status: number,
  head: string[],
  body: string,
): void {
  response.writeHead(status, head);
  response.end(body);
}

/**
 * A whole HTTP/1.1 answer as text, for a socket Node hands over before any response object
 * exists (a parser error, CONNECT): the error's answer, with `Connection: close`, since what
 * follows on that socket is not a request.
 */
export function rawErrorAnswer(
  code: ErrorCode,
  publicIsHttps: boolean,
  headers: Record<string, string> = {},
): string {
  const { status, head, body } = errorAnswer(code, securityHead(publicIsHttps), true, { headers });
  let text = `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n`;
  for (let i = 0; i < head.length; i += 2) text += `${head[i]}: ${head[i + 1]}\r\n`;
  return `${text}\r\n${body}`;
}
