import { Auth } from '@auth/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../http/error-handler.js';
import { errorBody, HttpError } from '../http/errors.js';
import { sendWebResponse, toWebRequest, webHeaders } from '../http/web-bridge.js';
import type { Observer, SignInOutcome } from '../metrics/observer.js';
import type { AuthPages, PageSite } from '../pages/auth-pages.js';
import { withRetryAfter } from '../pages/retry-after.js';
import type { WorkGate } from '../users/work-gate.js';
import { authBasePath, type AuthConfigFor } from './auth-config.js';
import { withUsableCallbackUrls } from './callback-url.js';
import { authCookieNames, type SessionCookiePrefix } from './cookie-names.js';
import { clientGroup } from './client-group.js';
import { parseCookies, sessionTokenFrom } from './cookies.js';
import type { FastAnswer, FastReader } from './fast-read.js';
import { takeFrontReadOutcome } from './front-read.js';
import { StoreUnavailableError, type AuthRequestContext } from './request-context.js';
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
  configs: { http: AuthConfigFor; https: AuthConfigFor };
  /** Answers session and CSRF reads without Auth.js's pipeline (fast paths on). */
  fastReader: FastReader | undefined;
  sessionCookiePrefix: SessionCookiePrefix;
  /** AUTH_URL's origin: fixes redirects whatever the Host header says. */
  publicOrigin: string | undefined;
  bodyLimitBytes: number;
  /** Sign-ins inside Auth.js at once, and how many may wait at the door (src/app.ts). */
  signIns: WorkGate;
  /** Gatehouse's sign-in and sign-out pages (src/pages/); without them, Auth.js's own. */
  pages?: AuthPages;
  /** Told how each sign-in ended. */
  observer: Pick<Observer, 'signIn'>;
}

const signInPaths = new Set([
  `${authBasePath}/signin/credentials`,
  `${authBasePath}/callback/credentials`,
]);

/**
 * The route a request reached and its query, as a URL parser reads the target. Fastify routes
 * `/api/auth/%73ession` and `http://host/api/auth/session` (absolute-form) to the session route;
 * every check and Auth.js itself must see that route, not the raw target (Auth.js would read
 * `%73ession` as an unknown action, and an absolute-form target as a path after the origin).
 */
function routeOf(request: FastifyRequest): { path: string; search: string } {
  const path = request.routeOptions.url;
  if (path === undefined) throw new HttpError('not_found');
  try {
    return { path, search: new URL(request.url, 'http://target.invalid').search };
  } catch {
    throw new HttpError('bad_request', {}, 'The request target is not a valid URL.');
  }
}

/** Each non-empty session cookie alone, then Auth.js's assembly of them (when it differs). */
function heldSessionTokens(
  cookies: Map<string, string>,
  name: string,
  assembled: string | undefined,
): string[] {
  const tokens = new Set<string>();
  for (const [cookieName, value] of cookies) {
    if (cookieName.startsWith(name) && value !== '') tokens.add(value);
  }
  if (assembled !== undefined && tokens.size > 1) tokens.add(assembled);
  return [...tokens];
}

/**
 * Auth.js's error page takes its status from the `error` it names: any client can ask for
 * `?error=Configuration` and get a 500. The page itself was served; the error it describes
 * happened to an earlier request, so it answers 200 here (a 5xx means this request failed).
 */
function servedPage(path: string, response: Response): Response {
  if (path !== `${authBasePath}/error` || response.status < 500) return response;
  return new Response(response.body, { status: 200, headers: response.headers });
}

/**
 * How a sign-in that went through Auth.js ended: our interruption if there was one, else the
 * error Auth.js reported (a refused CSRF token, wrong details), else what `authorize` decided.
 * Anything else (Auth.js failed after a success, or never asked) is a failure of ours.
 */
function signInOutcome(context: AuthRequestContext): SignInOutcome {
  const kind = context.interruption?.kind;
  if (kind !== undefined) return kind === 'internal' ? 'error' : kind;
  switch (context.authError) {
    case undefined:
      return context.signInResult === 'success' ? 'success' : 'error';
    case 'MissingCSRF':
      return 'csrf';
    case 'CredentialsSignin':
      return context.signInResult === 'invalid' ? 'invalid' : 'error';
    default:
      return 'error';
  }
}

function originOf(request: FastifyRequest, publicOrigin: string | undefined): string {
  if (publicOrigin !== undefined) return publicOrigin;
  // Behind a trusted proxy the scheme is X-Forwarded-Proto's: any other word than these two
  // would make an opaque origin ("null") that no URL can be built on.
  const protocol = request.protocol as string;
  if (protocol !== 'http' && protocol !== 'https') {
    throw new HttpError('bad_request', {}, 'The forwarded protocol is not http or https.');
  }
  try {
    return new URL(`${protocol}://${request.host}`).origin;
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
  refuse: (error: HttpError) => Promise<FastifyReply> | FastifyReply,
): Promise<FastifyReply> | FastifyReply {
  const interruption = context.interruption;
  switch (interruption?.kind) {
    case undefined:
      return sendWebResponse(reply, response);
    case 'throttled': {
      // Auth.js's own answer (code=rate_limited), plus Retry-After; JSON callers get 429.
      reply.header('retry-after', String(interruption.retryAfterSeconds));
      const isJson = response.headers.get('content-type')?.startsWith('application/json');
      // A form post's browser follows the 302 and drops the header: the URL tells the page.
      if (!isJson) {
        return sendWebResponse(reply, withRetryAfter(response, interruption.retryAfterSeconds));
      }
      const headers = new Headers(response.headers);
      return sendWebResponse(reply, new Response(response.body, { status: 429, headers }));
    }
    case 'overloaded':
      return refuse(new HttpError('overloaded', { 'retry-after': '1' }));
    case 'unavailable':
      request.log.error({ err: interruption.error }, 'database unavailable during auth');
      return refuse(new HttpError('unavailable', { 'retry-after': '5' }));
    case 'internal':
      request.log.error({ err: interruption.error }, 'unexpected error during auth');
      return reply.code(500).send(errorBody('internal_error', request.id));
  }
}

function sendFast(reply: FastifyReply, answer: FastAnswer): FastifyReply {
  reply.code(200).headers(answer.headers);
  if (answer.cookies.length > 0) reply.header('set-cookie', answer.cookies);
  // Bytes, not a string: Fastify would append `; charset=utf-8`, which Auth.js does not send.
  return reply.send(Buffer.from(answer.body));
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

  const isSecure = (request: FastifyRequest) =>
    request.protocol === 'https' || deps.publicOrigin?.startsWith('https:') === true;
  const siteOf = (request: FastifyRequest): PageSite => {
    const secure = isSecure(request);
    const authConfig = secure ? deps.configs.https : deps.configs.http;
    return { origin: originOf(request, deps.publicOrigin), secure, authConfig };
  };
  /** A sign-in or sign-out we cannot take now: a browser's form post sees the page, others JSON. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: HttpError) =>
    deps.pages?.busy(request, reply, error, () => siteOf(request)) ?? sendError(reply, error);

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const secure = isSecure(request);
    const route = routeOf(request);
    let body: Buffer | undefined;
    if (request.method === 'POST') {
      const signingIn = signInPaths.has(route.path);
      const crossSite = () => {
        if (signingIn) deps.observer.signIn('csrf');
        return new HttpError('cross_site');
      };
      // Login CSRF: a cross-site page could post its own valid token pair and sign the
      // victim into the attacker's account. Browsers say where a request comes from: a
      // sign-in must come from this origin (or be typed: `none`), never a sibling site.
      const fetchSite = request.headers['sec-fetch-site']?.toLowerCase();
      if (fetchSite === 'cross-site') throw crossSite();
      if (signingIn) {
        if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
          throw crossSite();
        }
        const origin = request.headers.origin;
        if (origin !== undefined && origin.toLowerCase() !== originOf(request, deps.publicOrigin)) {
          throw crossSite();
        }
      }
      const contentType = (request.headers['content-type'] ?? '').toLowerCase();
      const mediaType = contentType.split(';', 1)[0]?.trim();
      if (mediaType !== 'application/x-www-form-urlencoded' && mediaType !== 'application/json') {
        throw new HttpError('unsupported_media_type');
      }
      body = request.body instanceof Buffer ? request.body : Buffer.alloc(0);
      // Auth.js reads the body as JSON when `application/json` appears anywhere in the header
      // (a parameter too), so that is how it is checked: no parameter smuggles a body past.
      assertAuthBody(
        contentType.includes('application/json') ? 'application/json' : mediaType,
        body,
      );
    }
    // The contract's sign-in path signs in; in Auth.js only the callback path does.
    const path = signInPaths.has(route.path) ? `${authBasePath}/callback/credentials` : route.path;
    if (request.method === 'POST' && path === `${authBasePath}/callback/credentials`) {
      // Sign-ins wait at the door, not inside Auth.js, and past the queue are refused before
      // Auth.js works on them (CSRF digest, config, throttle, database) with the answer the
      // hash queue would give. A burst arrives all at once, before any of it reaches the hash
      // queue; admitted whole, its pre-hash work would hold the event loop in one block that
      // session reads and probes wait behind.
      const overloaded = () =>
        refuse(request, reply, new HttpError('overloaded', { 'retry-after': '1' }));
      // Fair between clients: waiters are let in round-robin by client address (IPv6 per
      // /64), and one address holds only a share of the queue.
      const admitted = deps.signIns.tryRun(
        async () =>
          // A client that gave up while waiting at the door costs no hash and no throttle
          // charge; it was not refused, so it is no sign-in outcome either.
          request.raw.socket.destroyed
            ? overloaded()
            : authenticate(request, reply, path, route.search, body, secure),
        clientGroup(request.ip),
      );
      if (admitted !== undefined) return admitted;
      deps.observer.signIn('overloaded');
      return overloaded();
    }
    return authenticate(request, reply, path, route.search, body, secure);
  };

  /** The request as Auth.js sees it; our callbacks' interruptions are answered by us. */
  async function authenticate(
    request: FastifyRequest,
    reply: FastifyReply,
    path: string,
    search: string,
    body: Buffer | undefined,
    secure: boolean,
  ) {
    const config = secure ? deps.configs.https : deps.configs.http;
    const origin = originOf(request, deps.publicOrigin);
    const names = authCookieNames(secure, deps.sessionCookiePrefix);
    // A callbackUrl Auth.js cannot use (it would answer 500, or fail before signing out) is
    // dropped, wherever it came from: Auth.js then falls back as for an absent one.
    const headers = webHeaders(request);
    const usable = withUsableCallbackUrls(
      {
        search,
        cookie: headers.get('cookie') ?? undefined,
        body,
        contentType: headers.get('content-type'),
      },
      origin,
      names.callbackUrl,
    );
    if (usable.cookie === undefined) headers.delete('cookie');
    else headers.set('cookie', usable.cookie);
    const webRequest = toWebRequest(
      request,
      `${origin}${path}${usable.search}`,
      usable.body,
      headers,
    );
    const cookies = parseCookies(request.headers.cookie);
    const previousSessionToken = sessionTokenFrom(cookies, names.session);
    const context: AuthRequestContext = {
      clientIp: request.ip,
      // Chunked or not, as Auth.js reads it: signing in again must end the session held.
      previousSessionToken,
      // Sign-out ends every session the request holds a token for, whatever else it carries.
      ...(path === `${authBasePath}/signout` && {
        heldSessionTokens: heldSessionTokens(cookies, names.session, previousSessionToken),
      }),
    };
    const signingIn = request.method === 'POST' && path === `${authBasePath}/callback/credentials`;
    let response: Response;
    try {
      response = servedPage(path, await Auth(webRequest, config(context)));
    } catch (error) {
      if (signingIn) deps.observer.signIn('error');
      throw error;
    }
    if (signingIn) deps.observer.signIn(signInOutcome(context));
    return answerInterruption(request, reply, context, response, (error) =>
      refuse(request, reply, error),
    );
  }

  const fastReader = deps.fastReader;
  const fastHandler = (action: 'session' | 'csrf') =>
    async function fast(request: FastifyRequest, reply: FastifyReply) {
      // A read already tried in front of Fastify is not tried again (src/auth/front-read.ts).
      const front = takeFrontReadOutcome(request.raw);
      // A query string may carry callbackUrl, which only Auth.js's own path handles.
      if (
        fastReader === undefined ||
        front?.kind === 'deferred' ||
        (front === undefined && (request.method === 'POST' || routeOf(request).search !== ''))
      ) {
        return handler(request, reply);
      }
      const secure = isSecure(request);
      const origin = originOf(request, deps.publicOrigin);
      const cookie = request.headers.cookie;
      let answer: FastAnswer | undefined;
      try {
        if (front?.kind === 'failed') throw front.error;
        answer =
          action === 'csrf'
            ? fastReader.csrf(cookie, origin, secure)
            : await fastReader.session(cookie, origin, secure);
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error;
        request.log.error({ err: error.cause }, 'database unavailable during session read');
        return sendError(reply, new HttpError('unavailable', { 'retry-after': '5' }));
      }
      return answer === undefined ? handler(request, reply) : sendFast(reply, answer);
    };

  const pages = deps.pages;
  // Gatehouse's pages answer GET and HEAD; a POST to /signout stays Auth.js's.
  const pageHandler = (action: 'signin' | 'signout') =>
    async function page(request: FastifyRequest, reply: FastifyReply) {
      if (request.method === 'POST' || pages === undefined) return handler(request, reply);
      return pages.show(action, request, reply, siteOf(request));
    };

  for (const [action, methods] of Object.entries(authRoutes)) {
    const routeHandler =
      action === 'session' || action === 'csrf'
        ? fastHandler(action)
        : action === 'signin' || action === 'signout'
          ? pageHandler(action)
          : handler;
    app.route({ method: [...methods], url: `${authBasePath}/${action}`, handler: routeHandler });
  }
}
