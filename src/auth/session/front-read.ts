import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { AccessLine } from '../../log/access-line.js';
import { errorBody, type ErrorCode } from '../../http/errors.js';
import type { Front } from '../../http/front-door.js';
import { jsonSecurityHeaders } from '../../http/security-headers.js';
import { createTurnEndWrites } from '../../http/turn-end-writes.js';
import { StoreUnavailableError } from '../request/request-context.js';
import { readHeaders, type FastAnswer, type FastReader, type ReadMemo } from './session-read.js';
import { RecentCache } from '../../util/recent-cache.js';

const originsBudgetBytes = 64 * 1024;
// A Map entry and two string headers, roughly.
const entryOverheadBytes = 64;

export interface FrontReadOptions {
  reader: FastReader;
  /** AUTH_URL's origin; without it the origin comes from the Host header, as in the route. */
  publicOrigin: string | undefined;
  isDraining: () => boolean;
  /** Fastify's logger (it exists once the app is built, before the first request). */
  log: () => FastifyBaseLogger;
  /** Fastify's request-id generator, so access lines from here and from Fastify share one series. */
  nextRequestId: () => string;
  /** Whether to write an answer's access line (LOG_SUCCESS_SAMPLE; src/http/site.ts); all if omitted. */
  logsAnswer?: (method: string | undefined, status: number) => boolean;
  /** The access line built by hand (src/log/access-line.ts); through pino if omitted. */
  accessLine?: AccessLine | undefined;
}

export interface FrontRead {
  front: Front;
  /**
   * Whether the front took this request: then it answered it, unless session-read left it to
   * Auth.js (src/auth/session/session-read.ts), and the route sends it straight there. A pure function
   * of the request, so the route asks it instead of being told.
   */
  sees(request: IncomingMessage): boolean;
}

/**
 * `GET /api/auth/session` and `GET /api/auth/csrf` answered in front of Fastify with
 * session-read's answer, the headers Fastify's route and hooks would add (`Connection: close`
 * while draining too), and the same access log line. A session read is the most frequent
 * request an application sends; Fastify's routing, hooks and reply cost about a third of it.
 * Anything else, and any read session-read leaves to Auth.js (decided before anything is
 * written or asked of the store), goes to Fastify untouched: a GET carries no body. A store
 * failure is answered here, 503 as the route answers it, so the store is asked once. Only
 * without TRUST_PROXY, where http vs https is fixed by AUTH_URL.
 */
export function createFrontRead(options: FrontReadOptions): FrontRead {
  const { reader, publicOrigin } = options;
  const secure = publicOrigin?.startsWith('https:') === true;
  const securityHeaders = Object.entries(jsonSecurityHeaders(secure)).flat();
  // Every session and CSRF answer starts with the same headers: flattened once, not per read.
  const readHead = Object.entries(readHeaders).flat();
  // What `new URL(\`http://${host}\`).origin` gives for each Host header seen lately; a Host
  // header is up to a header's size, so the cache is bounded by bytes as well as by entries.
  const origins = new RecentCache<string, string | null>(256, {
    maxWeight: originsBudgetBytes,
    weigh: (host, origin) => host.length + (origin?.length ?? 0) + entryOverheadBytes,
  });
  const originOf = (host: string | undefined): string | undefined => {
    if (publicOrigin !== undefined) return publicOrigin;
    if (host === undefined) return undefined;
    let origin = origins.get(host);
    if (origin === undefined) {
      try {
        origin = new URL(`http://${host}`).origin;
      } catch {
        origin = null;
      }
      origins.set(host, origin);
    }
    return origin ?? undefined;
  };

  function sees(request: IncomingMessage): boolean {
    const { method, url, headers } = request;
    return (
      method === 'GET' &&
      (url === '/api/auth/session' || url === '/api/auth/csrf') &&
      headers['content-length'] === undefined &&
      headers['transfer-encoding'] === undefined &&
      originOf(headers.host) !== undefined
    );
  }

  function send(response: ServerResponse, status: number, answer: FastAnswer) {
    let headers: string[];
    if (answer.headers === readHeaders) headers = readHead.slice();
    else {
      headers = [];
      for (const name in answer.headers) headers.push(name, answer.headers[name] as string);
    }
    for (const cookie of answer.cookies) headers.push('set-cookie', cookie);
    for (const header of securityHeaders) headers.push(header);
    // Fastify's hooks add these (src/http/site.ts, security-headers.ts).
    if (answer.headers['cache-control'] === undefined) headers.push('cache-control', 'no-store');
    if (options.isDraining()) headers.push('connection', 'close');
    headers.push('content-length', String(Buffer.byteLength(answer.body)));
    response.writeHead(status, headers);
    // A string body goes out in one write with the head; a Buffer would take a second chunk.
    response.end(answer.body);
  }

  /** Our JSON error, as the route's `sendError` and the final error handler write it. */
  function sendError(
    response: ServerResponse,
    code: ErrorCode,
    status: number,
    headers: Record<string, string>,
    requestId?: string,
  ) {
    const body = JSON.stringify(errorBody(code, requestId));
    const contentType = { 'content-type': 'application/json; charset=utf-8' };
    send(response, status, { headers: { ...headers, ...contentType }, cookies: [], body });
  }

  // The level is fixed at start-up; Fastify's logger exists once the app is built.
  let logging:
    | { log: FastifyBaseLogger; access: FastifyBaseLogger; info: boolean; debug: boolean }
    | undefined;
  const logger = () => {
    if (logging === undefined) {
      const log = options.log();
      const enabled = (level: string) =>
        (log as Partial<Pick<Logger, 'isLevelEnabled'>>).isLevelEnabled?.(level) ?? false;
      // The access line holds a request id, the method, one of two fixed paths, the status, a
      // time and an address: nothing the redaction list censors can be in it. pino 10 runs the
      // list's wildcard paths (`*.password`…) over every key of every line all the same, a
      // clone and a parse of each path per key, the largest JavaScript cost of a logged read.
      // This child writes the same bytes without them; every other line keeps them.
      const access = log.child({}, { redact: { paths: [] } });
      logging = { log, access, info: enabled('info'), debug: enabled('debug') };
    }
    return logging;
  };

  /** The lines Fastify's hooks write for a request (src/app.ts), with an id from its series. */
  function received(request: IncomingMessage): string | undefined {
    const { log, info, debug } = logger();
    if (!info) return undefined;
    const reqId = options.nextRequestId();
    if (debug) log.debug({ reqId, method: request.method, path: request.url }, 'received');
    return reqId;
  }

  function answered(
    request: IncomingMessage,
    reqId: string | undefined,
    startedAt: number,
    status: number,
  ) {
    if (reqId === undefined) return;
    if (options.logsAnswer?.(request.method, status) === false) return;
    const ms = Math.round((performance.now() - startedAt) * 10) / 10;
    const ip = request.socket.remoteAddress;
    if (options.accessLine !== undefined) {
      options.accessLine(reqId, request.method as string, request.url as string, status, ms, ip);
      return;
    }
    logger().access.info(
      { reqId, method: request.method, path: request.url, status, ms, ip },
      'request',
    );
  }

  /** A read that failed: 503 for the store (as the route answers it), else a 500 with its id. */
  function failed(
    request: IncomingMessage,
    response: ServerResponse,
    error: unknown,
    startedAt: number,
    decidedId?: string,
  ) {
    const reqId = decidedId ?? received(request) ?? options.nextRequestId();
    const { log } = logger();
    if (error instanceof StoreUnavailableError) {
      log.error({ reqId, err: error.cause }, 'database unavailable during session read');
      sendError(response, 'unavailable', 503, { 'retry-after': '5' });
    } else {
      log.error({ reqId, err: error }, 'unhandled error');
      sendError(response, 'internal_error', 500, {}, reqId);
    }
    answered(request, reqId, startedAt, response.statusCode);
  }

  const atTurnEnd = createTurnEndWrites((error) =>
    logger().log.error({ err: error }, 'front session read failed after answering began'),
  );
  // Each kept-alive connection's last session read (session-read.ts, ReadMemo): gone with it.
  const memos = new WeakMap<Socket, ReadMemo>();
  const memoOf = (socket: Socket) => {
    let memo = memos.get(socket);
    if (memo === undefined) {
      memo = {};
      memos.set(socket, memo);
    }
    return memo;
  };

  function frontRead(request: IncomingMessage, response: ServerResponse): boolean {
    if (!sees(request)) return false;
    const origin = originOf(request.headers.host) as string;
    const cookie = request.headers.cookie;
    const startedAt = performance.now();
    let answer: FastAnswer | Promise<FastAnswer> | undefined;
    try {
      answer =
        request.url === '/api/auth/csrf'
          ? reader.csrf(cookie, origin, secure)
          : reader.session(cookie, origin, secure, memoOf(request.socket));
    } catch (error) {
      // The store failed in the same turn (SQLite): answered as a rejection is.
      failed(request, response, error, startedAt);
      return true;
    }
    // Left to Auth.js: Fastify's route sends it there (it asks `sees`).
    if (answer === undefined) return false;
    // The request id and the `received` line when the answer is decided, in arrival order.
    const reqId = received(request);
    const write = (ready: FastAnswer) => {
      try {
        send(response, 200, ready);
        answered(request, reqId, startedAt, 200);
      } catch (error) {
        logger().log.error({ err: error }, 'front session read failed after answering began');
        response.destroy();
      }
    };
    // Written with the rest of this turn's answers (src/http/turn-end-writes.ts).
    if (!(answer instanceof Promise)) {
      atTurnEnd(() => write(answer));
      return true;
    }
    answer
      .then(
        (ready) => atTurnEnd(() => write(ready)),
        (error: unknown) => failed(request, response, error, startedAt, reqId),
      )
      .catch((error: unknown) => {
        logger().log.error({ err: error }, 'front session read failed after answering began');
        response.destroy();
      });
    return true;
  }

  return { front: frontRead, sees };
}
