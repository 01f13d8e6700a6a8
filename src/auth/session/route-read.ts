import type { FastifyReply, FastifyRequest } from 'fastify';
import { storeUnavailable } from '../../http/answer.js';
import { sendError } from '../../http/error-handler.js';
import { StoreUnavailableError } from '../request/request-context.js';
import { isSecure, originOf, routeOf } from '../request/request-site.js';
import type { FrontRead } from './front-read.js';
import type { FastAnswer, FastReader } from './session-read.js';

export interface RouteReadDeps {
  /** session-read's fast branch; none with fast paths off. */
  fastReader: FastReader | undefined;
  /** The front in front of Fastify, when there is one: what it took, it answered or left to Auth.js. */
  frontRead: FrontRead | undefined;
  publicOrigin: string | undefined;
  /** Hands the request to Auth.js. */
  toAuthjs(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | FastifyReply;
}

function sendFast(reply: FastifyReply, answer: FastAnswer): FastifyReply {
  reply.code(200).headers(answer.headers);
  if (answer.cookies.length > 0) reply.header('set-cookie', answer.cookies);
  // Bytes, not a string: Fastify would append `; charset=utf-8`, which Auth.js does not send.
  return reply.send(Buffer.from(answer.body));
}

/**
 * The route's door to the session read: `GET /api/auth/session` and `GET /api/auth/csrf` that no
 * front answered (behind TRUST_PROXY, fast paths off, a query string, a POST) get session-read's
 * fast answer through Fastify, whose hooks add what every answer carries (src/http/answer.ts),
 * and a store failure its 503; what the read declines, and what the front took and left, goes
 * to Auth.js at once. A query string may carry callbackUrl, which only Auth.js's path handles.
 */
export function routeRead(deps: RouteReadDeps, action: 'session' | 'csrf') {
  const { fastReader, frontRead, publicOrigin } = deps;
  return async function fastRead(request: FastifyRequest, reply: FastifyReply) {
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
}
