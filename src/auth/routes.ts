import { Auth, type AuthConfig } from '@auth/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../http/error-handler.js';
import { errorBody, HttpError } from '../http/errors.js';
import { sendWebResponse, toWebRequest } from '../http/web-bridge.js';
import { authBasePath, sessionCookieName } from './auth-config.js';
import { authContext, type AuthRequestContext } from './request-context.js';
import { assertAuthBody } from './signin-body.js';

/** Every /api/auth route Gatehouse serves, with its methods (the rest is 404 or 405). */
export const authRoutes: Record<string, readonly ('GET' | 'POST')[]> = {
  session: ['GET', 'POST'],
  csrf: ['GET'],
  providers: ['GET'],
  signin: ['GET'],
  'signin/credentials': ['POST'],
  'callback/credentials': ['POST'],
  signout: ['GET', 'POST'],
  error: ['GET'],
};

export interface AuthRouteDeps {
  configs: { http: AuthConfig; https: AuthConfig };
  /** AUTH_URL's origin: fixes redirects whatever the Host header says. */
  publicOrigin: string | undefined;
  bodyLimitBytes: number;
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function originOf(request: FastifyRequest, publicOrigin: string | undefined): string {
  if (publicOrigin !== undefined) return publicOrigin;
  try {
    return new URL(`${request.protocol}://${request.host}`).origin;
  } catch {
    throw new HttpError('bad_request', {}, 'The Host header is not a valid host.');
  }
}

/** Answers a request Auth.js could not finish because of us (throttle, load, database, bug). */
function answerInterruption(
  request: FastifyRequest,
  reply: FastifyReply,
  context: AuthRequestContext,
  response: Response,
): Promise<FastifyReply> | FastifyReply {
  const interruption = context.interruption;
  switch (interruption?.kind) {
    case undefined:
      return sendWebResponse(reply, response);
    case 'throttled': {
      // Auth.js's own answer (code=rate_limited), plus Retry-After; JSON callers get 429.
      reply.header('retry-after', String(interruption.retryAfterSeconds));
      const isJson = response.headers.get('content-type')?.startsWith('application/json');
      if (!isJson) return sendWebResponse(reply, response);
      const headers = new Headers(response.headers);
      return sendWebResponse(reply, new Response(response.body, { status: 429, headers }));
    }
    case 'overloaded':
      return sendError(reply, new HttpError('overloaded', { 'retry-after': '1' }));
    case 'unavailable':
      request.log.error({ err: interruption.error }, 'database unavailable during auth');
      return sendError(reply, new HttpError('unavailable', { 'retry-after': '5' }));
    case 'internal':
      request.log.error({ err: interruption.error }, 'unexpected error during auth');
      return reply.code(500).send(errorBody('internal_error', request.id));
  }
}

/** Mounts /api/auth/*: our checks first (routes, media types, body size), then Auth.js. */
export function registerAuthRoutes(app: FastifyInstance, deps: AuthRouteDeps): void {
  app.removeAllContentTypeParsers();
  // Bodies stay bytes: Auth.js parses them itself, exactly as it would anywhere else.
  app.addContentTypeParser(
    ['application/x-www-form-urlencoded', 'application/json'],
    { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes },
    (_request, body, done) => done(null, body),
  );

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const secure = request.protocol === 'https' || deps.publicOrigin?.startsWith('https:') === true;
    const config = secure ? deps.configs.https : deps.configs.http;
    let body: Buffer | undefined;
    if (request.method === 'POST') {
      // Login CSRF: a cross-site page could post its own valid token pair and sign the
      // victim into the attacker's account. Browsers say where a request comes from.
      if (request.headers['sec-fetch-site'] === 'cross-site') throw new HttpError('cross_site');
      const mediaType = (request.headers['content-type'] ?? '')
        .split(';', 1)[0]
        ?.trim()
        .toLowerCase();
      if (mediaType !== 'application/x-www-form-urlencoded' && mediaType !== 'application/json') {
        throw new HttpError('unsupported_media_type');
      }
      body = request.body instanceof Buffer ? request.body : Buffer.alloc(0);
      assertAuthBody(mediaType, body);
    }
    // The contract's sign-in path signs in; in Auth.js only the callback path does.
    const url = request.url.replace(
      /^\/api\/auth\/signin\/credentials(?=$|\?)/,
      `${authBasePath}/callback/credentials`,
    );
    const webRequest = toWebRequest(request, `${originOf(request, deps.publicOrigin)}${url}`, body);
    const context: AuthRequestContext = {
      clientIp: request.ip,
      previousSessionToken: readCookie(request.headers.cookie, sessionCookieName(secure)),
    };
    const response = await authContext.run(context, () => Auth(webRequest, config));
    return answerInterruption(request, reply, context, response);
  };

  for (const [action, methods] of Object.entries(authRoutes)) {
    app.route({ method: [...methods], url: `${authBasePath}/${action}`, handler });
  }
}
