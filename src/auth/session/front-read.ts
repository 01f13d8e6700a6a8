import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { AccessLine } from '../../log/access-line.js';
import { createFrontLog, type FrontLog, type LogsAnswer } from '../../http/access-log.js';
import {
  errorAnswer,
  finishHead,
  securityHead,
  storeUnavailable,
  writeAnswer,
} from '../../http/answer.js';
import type { Front } from '../../http/front-door.js';
import { createTurnEndWrites } from '../../http/turn-end-writes.js';
import { StoreUnavailableError } from '../request/request-context.js';
import { readHeaders, type FastAnswer, type FastReader, type ReadMemo } from './session-read.js';
import { readCache } from '../../sessions/caches.js';

export interface FrontReadOptions {
  reader: FastReader;
  /** A session read whose cookies it leaves to the route (an old app's, src/auth/session/legacy-exchange.ts). */
  declines?: ((cookieHeader: string | undefined) => boolean) | undefined;
  /** AUTH_URL's origin; without it the origin comes from the Host header, as in the route. */
  publicOrigin: string | undefined;
  isDraining: () => boolean;
  /** Fastify's logger (it exists once the app is built, before the first request). */
  log: () => FastifyBaseLogger;
  /** Fastify's request-id generator, so access lines from here and from Fastify share one series. */
  nextRequestId: () => string;
  /** Whether to write an answer's access line (LOG_SUCCESS_SAMPLE; src/http/access-log.ts); all if omitted. */
  logsAnswer?: LogsAnswer;
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
 * The origin of a request: AUTH_URL's, else what `new URL(\`http://${host}\`).origin` gives for
 * its Host header (remembered for the Host headers seen lately, src/sessions/caches.ts), else
 * undefined for a Host header that is no origin.
 */
function originsOf(
  publicOrigin: string | undefined,
): (host: string | undefined) => string | undefined {
  if (publicOrigin !== undefined) return () => publicOrigin;
  const origins = readCache<string, string | null>(
    'hostOrigins',
    (host, origin) => host.length + (origin?.length ?? 0),
  );
  return (host) => {
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
}

/** Each kept-alive connection's last session read (session-read.ts, ReadMemo): gone with it. */
function connectionMemos(): (socket: Socket) => ReadMemo {
  const memos = new WeakMap<Socket, ReadMemo>();
  return (socket) => {
    let memo = memos.get(socket);
    if (memo === undefined) {
      memo = {};
      memos.set(socket, memo);
    }
    return memo;
  };
}

/** How the front writes a read's answer, a failure's, and their lines. */
interface Answering {
  security: readonly string[];
  isDraining: () => boolean;
  log: FrontLog;
}

// Every session and CSRF answer starts with the same headers: flattened once, not per read.
const readHead = Object.entries(readHeaders).flat();

/** session-read's answer, with what Fastify's route and hooks would add (src/http/answer.ts). */
function send(answering: Answering, response: ServerResponse, answer: FastAnswer) {
  let head: string[];
  if (answer.headers === readHeaders) head = readHead.slice();
  else {
    head = [];
    for (const name in answer.headers) head.push(name, answer.headers[name] as string);
  }
  for (const cookie of answer.cookies) head.push('set-cookie', cookie);
  const cachingSet = answer.headers['cache-control'] !== undefined;
  const bytes = Buffer.byteLength(answer.body);
  finishHead(head, answering.security, cachingSet, answering.isDraining(), bytes);
  // A string body goes out in one write with the head; a Buffer would take a second chunk.
  writeAnswer(response, 200, head, answer.body);
}

/** A read that failed: 503 for the store (as the route answers it), else a 500 with its id. */
function failed(
  answering: Answering,
  request: IncomingMessage,
  response: ServerResponse,
  error: unknown,
  startedAt: number,
  decidedId?: string,
) {
  const { log } = answering;
  const reqId = decidedId ?? log.received(request) ?? log.nextRequestId();
  const draining = answering.isDraining();
  let refused;
  if (error instanceof StoreUnavailableError) {
    log.log().error({ reqId, err: error.cause }, 'database unavailable during session read');
    const { code, headers } = storeUnavailable();
    refused = errorAnswer(code, answering.security, draining, { headers });
  } else {
    log.log().error({ reqId, err: error }, 'unhandled error');
    refused = errorAnswer('internal_error', answering.security, draining, { requestId: reqId });
  }
  writeAnswer(response, refused.status, refused.head, refused.body);
  log.answered(request, reqId, startedAt, refused.status);
}

/**
 * `GET /api/auth/session` and `GET /api/auth/csrf` answered in front of Fastify with
 * session-read's answer, the head Fastify's route and hooks would write (src/http/answer.ts,
 * `Connection: close` while draining too), and the same access line (src/http/access-log.ts).
 * A session read is the most frequent request an application sends; Fastify's routing, hooks
 * and reply cost about a third of it. Anything else, and any read session-read leaves to
 * Auth.js (decided before anything is written or asked of the store), goes to Fastify
 * untouched: a GET carries no body. A store failure is answered here, 503 as the route answers
 * it, so the store is asked once. Only without TRUST_PROXY, where http vs https is fixed by
 * AUTH_URL.
 */
export function createFrontRead(options: FrontReadOptions): FrontRead {
  const { reader, publicOrigin } = options;
  const secure = publicOrigin?.startsWith('https:') === true;
  const originOf = originsOf(publicOrigin);
  const log = createFrontLog(options);
  const answering = { security: securityHead(secure), isDraining: options.isDraining, log };
  const memoOf = connectionMemos();
  const broken = (error: unknown) =>
    log.log().error({ err: error }, 'front session read failed after answering began');
  const atTurnEnd = createTurnEndWrites(broken);

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

  function frontRead(request: IncomingMessage, response: ServerResponse): boolean {
    if (!sees(request)) return false;
    const origin = originOf(request.headers.host) as string;
    const cookie = request.headers.cookie;
    if (options.declines?.(cookie) === true && request.url === '/api/auth/session') return false;
    const startedAt = performance.now();
    let answer: FastAnswer | Promise<FastAnswer> | undefined;
    try {
      answer =
        request.url === '/api/auth/csrf'
          ? reader.csrf(cookie, origin, secure)
          : reader.session(cookie, origin, secure, memoOf(request.socket));
    } catch (error) {
      // The store failed in the same turn (SQLite): answered as a rejection is.
      failed(answering, request, response, error, startedAt);
      return true;
    }
    // Left to Auth.js: Fastify's route sends it there (it asks `sees`).
    if (answer === undefined) return false;
    // The request id and the `received` line when the answer is decided, in arrival order.
    const reqId = log.received(request);
    const write = (ready: FastAnswer) => {
      try {
        send(answering, response, ready);
        log.answered(request, reqId, startedAt, 200);
      } catch (error) {
        broken(error);
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
        (error: unknown) => failed(answering, request, response, error, startedAt, reqId),
      )
      .catch((error: unknown) => {
        broken(error);
        response.destroy();
      });
    return true;
  }

  return { front: frontRead, sees };
}
