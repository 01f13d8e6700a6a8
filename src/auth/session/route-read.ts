import type { FastifyReply, FastifyRequest } from 'fastify';
import { storeUnavailable } from '../../http/answer.js';
import { sendError } from '../../http/error-handler.js';
import { StoreUnavailableError } from '../request/request-context.js';
import { isSecure, originOf, routeOf } from '../request/request-site.js';
import type { FrontRead } from './front-read.js';
import type { Exchanged, LegacyExchange } from './legacy-exchange.js';
import type { FastAnswer, FastReader } from './session-read.js';

export interface RouteReadDeps {
  /** session-read's fast branch; none with fast paths off. */
  fastReader: FastReader | undefined;
  /** The front in front of Fastify, when there is one: what it took, it answered or left to Auth.js. */
  frontRead: FrontRead | undefined;
  publicOrigin: string | undefined;
  /** An old app's session cookies exchanged first (LEGACY_AUTH_SECRET); none: not taken. */
  legacy?: LegacyExchange | undefined;
  /** Hands the request to Auth.js. */
  toAuthjs(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | FastifyReply;
}

function sendFast(reply: FastifyReply, answer: FastAnswer): FastifyReply {
  reply.code(200).headers(answer.headers);
  if (answer.cookies.length > 0) reply.header('set-cookie', answer.cookies);
  // Bytes, not a string: Fastify would append `; charset=utf-8`, which Auth.js does not send.
  return reply.send(Buffer.from(answer.body));
}

/** The request's Cookie header, as Fastify and Auth.js's bridge (its raw lines) both read it. */
function replaceCookies(request: FastifyRequest, cookieHeader: string): void {
  request.headers.cookie = cookieHeader;
  const raw = request.raw.rawHeaders;
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== 'cookie')
      kept.push(raw[i] as string, raw[i + 1] as string);
  }
  kept.push('Cookie', cookieHeader);
  raw.splice(0, raw.length, ...kept);
}

/**
 * The route's door to the session read: `GET /api/auth/session` and `GET /api/auth/csrf` that no
 * front answered (behind TRUST_PROXY, fast paths off, a query string, a POST) get session-read's
 * fast answer through Fastify, whose hooks add what every answer carries (src/http/answer.ts),
 * and a store failure its 503; what the read declines, and what the front took and left, goes
 * to Auth.js at once. A query string may carry callbackUrl, which only Auth.js's path handles.
 */
export function routeRead(deps: RouteReadDeps, action: 'session' | 'csrf') {
  const { fastReader, frontRead, publicOrigin, legacy } = deps;
  const read = async function fastRead(request: FastifyRequest, reply: FastifyReply) {
    if (
      fastReader === undefined ||
      frontRead?.sees(request.raw) === true ||
      request.method === 'POST' ||
      routeOf(request).search !== ''
    ) {
      return deps.toAuthjs(request, reply);
    }
    const secure = isSecure(request, publicOrigin);
    const origin = originOf(request, publicOrigin);
    const cookie = request.headers.cookie;
    let answer: FastAnswer | undefined;
    try {
      answer =
        action === 'csrf'
          ? fastReader.csrf(cookie, origin, secure)
          : await fastReader.session(cookie, origin, secure);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      request.log.error({ err: error.cause }, 'database unavailable during session read');
      return sendError(reply, storeUnavailable());
    }
    return answer === undefined ? deps.toAuthjs(request, reply) : sendFast(reply, answer);
  };
  if (legacy === undefined || action !== 'session') return read;
  return exchangeFirst(legacy, publicOrigin, read, async (request, reply, exchanged) => {
    // Auth.js sets the session's cookie itself (renewed); the fast branch only when due, which
    // a token made this instant is not, so it is set here.
    if (request.method !== 'GET' || fastReader === undefined || routeOf(request).search !== '')
      return deps.toAuthjs(request, reply);
    let answer: FastAnswer | undefined;
    try {
      answer = await fastReader.session(
        exchanged.cookieHeader,
        originOf(request, publicOrigin),
        isSecure(request, publicOrigin),
      );
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      request.log.error({ err: error.cause }, 'database unavailable during session read');
      return sendError(reply, storeUnavailable());
    }
    if (answer === undefined) return deps.toAuthjs(request, reply);
    const session = exchanged.sessionCookie;
    return sendFast(
      reply,
      session === undefined ? answer : { ...answer, cookies: [...answer.cookies, session] },
    );
  });
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/**
 * An old app's session cookie exchanged (src/auth/session/legacy-exchange.ts) before the request
 * goes on: then `exchanged` answers it with the request's cookies replaced, else `next` as it
 * came. A session read (GET or POST) takes the new session; a sign-out ends it, so the old token
 * is ended for good with it.
 */
export function exchangeFirst(
  legacy: LegacyExchange,
  publicOrigin: string | undefined,
  next: Handler,
  exchanged: (
    request: FastifyRequest,
    reply: FastifyReply,
    done: Exchanged,
  ) => Promise<FastifyReply> = next,
): Handler {
  return async function exchangeThenGoOn(request, reply) {
    let done: Exchanged | undefined;
    try {
      done = await legacy.exchange(request.headers.cookie, isSecure(request, publicOrigin), {
        ip: request.ip,
        userAgent: request.headers['user-agent'] ?? '',
      });
    } catch (error) {
      request.log.error({ err: error }, 'database unavailable during an old session’s exchange');
      return sendError(reply, storeUnavailable());
    }
    if (done === undefined) return next(request, reply);
    replaceCookies(request, done.cookieHeader);
    reply.header('set-cookie', done.clears);
    return exchanged(request, reply, done);
  };
}
