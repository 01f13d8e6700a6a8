import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../http/error-handler.js';
import { HttpError } from '../../http/errors.js';
import { StoreUnavailableError } from '../request/request-context.js';
import { isSecure, originOf, routeOf } from '../request/request-site.js';
import type { FrontRead } from '../session/front-read.js';
import type { FastAnswer, FastReader } from '../session/session-read.js';

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

export interface ReadRouteDeps {
  fastReader: FastReader | undefined;
  frontRead: FrontRead | undefined;
  publicOrigin: string | undefined;
  /** The action as Auth.js answers it, behind the wing's guards. */
  toAuthjs: Handler;
}

function sendFast(reply: FastifyReply, answer: FastAnswer): FastifyReply {
  reply.code(200).headers(answer.headers);
  if (answer.cookies.length > 0) reply.header('set-cookie', answer.cookies);
  // Bytes, not a string: Fastify would append `; charset=utf-8`, which Auth.js does not send.
  return reply.send(Buffer.from(answer.body));
}

/** A session or CSRF read: session-read's fast branch unless it is Auth.js's. */
export function readRoute(deps: ReadRouteDeps, action: 'session' | 'csrf'): Handler {
  const { fastReader, frontRead, publicOrigin } = deps;
  return async function fastRead(request, reply) {
    // A read the front took and left to Auth.js goes there at once (src/auth/session/front-read.ts);
    // a query string may carry callbackUrl, which only Auth.js's own path handles.
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
      return sendError(reply, new HttpError('unavailable', { 'retry-after': '5' }));
    }
    return answer === undefined ? deps.toAuthjs(request, reply) : sendFast(reply, answer);
  };
}
