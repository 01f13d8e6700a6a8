import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { Front } from '../http/front-door.js';
import { jsonSecurityHeaders } from '../http/security-headers.js';
import type { FastAnswer, FastReader } from './fast-read.js';
import { RecentCache } from '../util/recent-cache.js';

/** How a session read tried in front of Fastify ended, when it handed the request on. */
export type FrontReadOutcome =
  /** The reader leaves this one to Auth.js: the route need not ask it again. */
  | { kind: 'deferred' }
  /** The read failed (a store error: 503); the route answers it without reading again. */
  | { kind: 'failed'; error: unknown };

const handedOn = new WeakMap<IncomingMessage, FrontReadOutcome>();

/** How the read in front of Fastify ended for this request, if one was tried (taken once). */
export function takeFrontReadOutcome(request: IncomingMessage): FrontReadOutcome | undefined {
  const outcome = handedOn.get(request);
  handedOn.delete(request);
  return outcome;
}

export interface FrontReadOptions {
  reader: FastReader;
  /** AUTH_URL's origin; without it the origin comes from the Host header, as in the route. */
  publicOrigin: string | undefined;
  isDraining: () => boolean;
  /** Fastify's logger (it exists once the app is built, before the first request). */
  log: () => FastifyBaseLogger;
  /** Fastify's request-id generator, so access lines from here and from Fastify share one series. */
  nextRequestId: () => string;
}

/**
 * `GET /api/auth/session` and `GET /api/auth/csrf` answered in front of Fastify with the fast
 * reader's answer, the headers Fastify's route and hooks would add, and the same access log
 * line. A session read is the most frequent request an application sends; Fastify's routing,
 * hooks and reply cost about a third of it. Anything else, or anything the reader leaves to
 * Auth.js (or fails on), goes to Fastify untouched: nothing has been written by then, and a
 * GET carries no body. What the read found goes along (src/auth/routes.ts): a request it leaves
 * to Auth.js goes straight there, and a failed read is answered, not tried again. Only without
 * TRUST_PROXY, where http vs https is fixed by AUTH_URL.
 * Differential tests against plain Auth.js cover it (test/fast-read.test.ts).
 */
export function createFrontRead(options: FrontReadOptions): Front {
  const { reader, publicOrigin } = options;
  const secure = publicOrigin?.startsWith('https:') === true;
  const securityHeaders = Object.entries(jsonSecurityHeaders(secure)).flat();
  // What `new URL(\`http://${host}\`).origin` gives for each Host header seen lately.
  const origins = new RecentCache<string, string | null>(256);
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

  function send(response: ServerResponse, answer: FastAnswer) {
    const headers: string[] = [];
    for (const name in answer.headers) headers.push(name, answer.headers[name] as string);
    for (const cookie of answer.cookies) headers.push('set-cookie', cookie);
    headers.push(...securityHeaders, 'content-length', String(Buffer.byteLength(answer.body)));
    response.writeHead(200, headers);
    // A string body goes out in one write with the head; a Buffer would take a second chunk.
    response.end(answer.body);
  }

  // The level is fixed at start-up; Fastify's logger exists once the app is built.
  let logging: { log: FastifyBaseLogger; info: boolean; debug: boolean } | undefined;
  const logger = () => {
    if (logging === undefined) {
      const log = options.log();
      const enabled = (level: string) =>
        (log as Partial<Pick<Logger, 'isLevelEnabled'>>).isLevelEnabled?.(level) ?? false;
      logging = { log, info: enabled('info'), debug: enabled('debug') };
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

  function answered(request: IncomingMessage, reqId: string | undefined, startedAt: number) {
    if (reqId === undefined) return;
    logger().log.info(
      {
        reqId,
        method: request.method,
        path: request.url,
        status: 200,
        ms: Math.round((performance.now() - startedAt) * 10) / 10,
        ip: request.socket.remoteAddress,
      },
      'request',
    );
  }

  return function frontRead(
    request: IncomingMessage,
    response: ServerResponse,
    fallback: RequestListener,
  ): boolean {
    if (request.method !== 'GET') return false;
    const url = request.url;
    const isSession = url === '/api/auth/session';
    if (!isSession && url !== '/api/auth/csrf') return false;
    const headers = request.headers;
    if (
      options.isDraining() ||
      headers['content-length'] !== undefined ||
      headers['transfer-encoding'] !== undefined
    ) {
      return false;
    }
    const origin = originOf(headers.host);
    if (origin === undefined) return false;
    const startedAt = performance.now();

    if (!isSession) {
      const answer = reader.csrf(headers.cookie, origin, secure);
      const reqId = received(request);
      send(response, answer);
      answered(request, reqId, startedAt);
      return true;
    }
    reader
      .session(headers.cookie, origin, secure)
      .then(
        (answer) => {
          if (answer === undefined) {
            handedOn.set(request, { kind: 'deferred' });
            return fallback(request, response);
          }
          const reqId = received(request);
          send(response, answer);
          answered(request, reqId, startedAt);
        },
        // The route answers the failure as it does its own (503 on a store error), without
        // asking the store again: one failing read per request, not two.
        (error: unknown) => {
          handedOn.set(request, { kind: 'failed', error });
          fallback(request, response);
        },
      )
      .catch((error: unknown) => {
        logger().log.error({ err: error }, 'front session read failed after answering began');
        response.destroy();
      });
    return true;
  };
}
