import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../http/error-handler.js';
import { HttpError } from '../../http/errors.js';
import { storeUnavailable } from '../../http/answer.js';
import { sendWebResponse } from '../../http/web-bridge.js';
import type { Observer } from '../../observe/observer.js';
import type { AuthPages, PageView, SignedInUser } from '../../pages/signin/auth-pages.js';
import type { WorkGate } from '../../traffic/work-gate.js';
import { authBasePath, type AuthConfigFor } from './auth-config.js';
import { authjsBridge } from './authjs-bridge.js';
import { guardAuthBody } from '../request/body-guard.js';
import type { AccountEventSink } from '../request/account-events.js';
import type { SessionCookiePrefix } from '../cookies/cookie-names.js';
import type { FrontRead } from '../session/front-read.js';
import type { PasskeyPort } from './passkey-port.js';
import { isEnrolmentStep, type EnrolmentKey, type EnrolmentPort } from './enrolment-port.js';
import { parseCookies } from '../cookies/cookies.js';
import { challengeCookieName as secondStepCookieName } from '../../pages/signin/second-step-cookie.js';
import { CrossSiteError, loginCsrfGuard } from '../signin/login-csrf-guard.js';
import { createPageCsrf } from './page-csrf.js';
import { StoreUnavailableError } from '../request/request-context.js';
import { isSecure, originOf, routeOf } from '../request/request-site.js';
import type { FastReader } from '../session/session-read.js';
import { routeRead } from '../session/route-read.js';
import { signInDoor } from '../signin/signin-door.js';

type AuthAction =
  | 'session'
  | 'csrf'
  | 'providers'
  | 'signin'
  | 'signin/credentials'
  | 'callback/credentials'
  | 'signout'
  | 'error'
  | 'webauthn-options/passkey'
  | 'callback/passkey'
  | 'enrolment/totp';

/** Every /api/auth route Gatehouse serves, with its methods (the rest is 404 or 405). */
export const authRoutes: Record<AuthAction, readonly ('GET' | 'POST')[]> = {
  session: ['GET', 'POST'],
  csrf: ['GET'],
  providers: ['GET'],
  signin: ['GET'],
  'signin/credentials': ['POST'],
  'callback/credentials': ['POST'],
  signout: ['GET', 'POST'],
  error: ['GET'],
  'webauthn-options/passkey': ['GET'],
  'callback/passkey': ['POST'],
  'enrolment/totp': ['GET'],
};

export interface AuthRouteDeps {
  configs: { http: AuthConfigFor; https: AuthConfigFor };
  /** Answers session and CSRF reads without Auth.js's pipeline (fast paths on). */
  fastReader: FastReader | undefined;
  /** The same reads answered in front of Fastify, when the site allows it. */
  frontRead: FrontRead | undefined;
  sessionCookiePrefix: SessionCookiePrefix;
  /** Whether a session token reads, with the codec Auth.js is configured with for the scheme. */
  readsAsSessionToken: (token: string, secure: boolean) => Promise<boolean>;
  /** AUTH_URL's origin: fixes redirects whatever the Host header says. */
  publicOrigin: string | undefined;
  bodyLimitBytes: number;
  /** Sign-ins inside Auth.js at once, and how many may wait at the door (src/auth/register.ts). */
  signIns: WorkGate;
  /** Gatehouse's sign-in and sign-out pages and `/` (src/pages/); without them, Auth.js's own. */
  pages?: AuthPages;
  /**
   * Who a session cookie signs in (src/auth/register.ts), revocation included; `null`: nobody.
   * Rejects with StoreUnavailableError when the store cannot say. Needed with `pages`.
   */
  signedInUser?: (
    cookieHeader: string | undefined,
    secure: boolean,
  ) => Promise<SignedInUser | null>;
  /** Told how each sign-in ended. */
  observer: Pick<Observer, 'signIn'>;
  /** The account's record of sign-ins and sign-outs. */
  events?: AccountEventSink;
  /** Passkeys (the account wing's); without them their routes answer 404. */
  passkeys?: PasskeyPort;
  /** SECOND_FACTOR=required: the key a sign-in's challenge enrols (the account wing's). */
  enrolment?: EnrolmentPort;
}

/**
 * What a page of this origin prints its forms with (Auth.js's CSRF token and the cookies to
 * set), or Auth.js's own answer when its CSRF action gave none (fast paths off).
 */
export type PageViewOf = (
  request: FastifyRequest,
  query: string,
) => Promise<Omit<PageView, 'signedIn'> | Response>;

const callbackPath = `${authBasePath}/callback/credentials`;
const signInPaths = new Set([`${authBasePath}/signin/credentials`, callbackPath]);
const passkeyCallbackPath = `${authBasePath}/callback/passkey`;

/** The callback's `action` (Auth.js's WebAuthn field), from a form or JSON body. */
function passkeyActionOf(request: FastifyRequest, body: Buffer): unknown {
  const text = body.toString('utf8');
  if (!(request.headers['content-type'] ?? '').toLowerCase().includes('application/json')) {
    return new URLSearchParams(text).get('action');
  }
  // The body guard has checked it is a JSON object.
  return (JSON.parse(text) as Record<string, unknown>).action;
}

/**
 * Mounts /api/auth/*: each action's handler from the table at the end. Our checks come first
 * (login CSRF, body, the sign-in door), then Auth.js (src/auth/bridge/authjs-bridge.ts); session and
 * CSRF reads go to session-read's fast branch, the pages get what they print.
 */
export function registerAuthRoutes(
  app: FastifyInstance,
  deps: AuthRouteDeps,
): { pageView: PageViewOf } {
  app.removeAllContentTypeParsers();
  // Bodies stay bytes: Auth.js parses them itself, exactly as it would anywhere else.
  app.addContentTypeParser(
    ['application/x-www-form-urlencoded', 'application/json'],
    { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes },
    (_request, body, done) => done(null, body),
  );

  const { publicOrigin, pages, fastReader, frontRead } = deps;
  /** What a page prints its form with: Auth.js's CSRF token and cookies for this browser. */
  const pageView: PageViewOf = async (request, query) => {
    const site = {
      origin: originOf(request, publicOrigin),
      secure: isSecure(request, publicOrigin),
    };
    const csrf = await pageCsrf(request, site, query);
    return csrf.ok ? { ...site, csrf } : csrf.response;
  };
  /** Who is signed in, for a page that greets: `undefined` when the store cannot say now. */
  const signedInFor = async (request: FastifyRequest) => {
    if (deps.signedInUser === undefined) return undefined;
    try {
      return await deps.signedInUser(request.headers.cookie, isSecure(request, publicOrigin));
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      // The page still works without the greeting; the session read itself answers 503.
      request.log.warn({ err: error.cause }, 'database unavailable: page shown without session');
      return undefined;
    }
  };
  /**
   * The sign-in page after `second_factor_enrolment_required` (or a refusal of its codes): the
   * key the browser's challenge enrols, or null when there is none to enrol.
   */
  const enrolmentKeyFor = async (request: FastifyRequest, query: string) => {
    const params = new URLSearchParams(query);
    if (deps.enrolment === undefined || !isEnrolmentStep(params)) return null;
    const challenge = parseCookies(request.headers.cookie).get(
      secondStepCookieName(isSecure(request, publicOrigin)),
    );
    if (challenge === undefined || challenge === '') return null;
    try {
      return await deps.enrolment.keyFor(challenge);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      request.log.error({ err: error.cause }, 'database unavailable during an enrolment read');
      return 'unavailable' as const;
    }
  };
  /** A sign-in or sign-out we cannot take now: a browser's form post sees the page, others JSON. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: HttpError) =>
    pages?.busy(request, reply, error, async (): Promise<PageView | undefined> => {
      const view = await pageView(request, '');
      return view instanceof Response ? undefined : view;
    }) ?? sendError(reply, error);
  const bridge = authjsBridge({
    ...deps,
    refuse,
    passkeyProvider: deps.passkeys !== undefined,
    enrolled(reply, response, recoveryCodes) {
      const continueUrl = response.headers.get('location');
      if (pages === undefined || continueUrl === null) return undefined;
      const cookies = response.headers.getSetCookie();
      return pages.enrolled(reply, { recoveryCodes, continueUrl, cookies });
    },
  });
  const pageCsrf = createPageCsrf({ fast: fastReader, bridge });
  const assertSameOrigin = loginCsrfGuard({
    signInPaths: new Set([...signInPaths, passkeyCallbackPath]),
    originOf: (request) => originOf(request, publicOrigin),
    onSignInRefused: () => deps.observer.signIn('csrf'),
  });
  const enterSignIn = signInDoor({ gate: deps.signIns, observer: deps.observer, refuse });

  /** Any action as Auth.js answers it, behind our guards. */
  async function toAuthjs(request: FastifyRequest, reply: FastifyReply) {
    const secure = isSecure(request, publicOrigin);
    const route = routeOf(request);
    let body: Buffer | undefined;
    if (request.method === 'POST') {
      try {
        assertSameOrigin(request, route.path);
      } catch (error) {
        // A browser's form post sees why, in words; every other caller the JSON error.
        if (!(error instanceof CrossSiteError) || pages === undefined) throw error;
        const page = pages.crossSite(request, reply, error, error.refusal);
        if (page === undefined) throw error;
        return page;
      }
      body = guardAuthBody(request);
    }
    // The contract's sign-in path signs in; in Auth.js only the callback path does.
    const path = signInPaths.has(route.path) ? callbackPath : route.path;
    const answer = () => bridge.answer(request, reply, { ...route, path, body, secure });
    return request.method === 'POST' && path === callbackPath
      ? enterSignIn(request, reply, answer)
      : answer();
  }

  /**
   * `POST /api/auth/callback/passkey`, as Auth.js's Passkey provider takes it (`action`, `data`,
   * `csrfToken`, `callbackUrl`): `authenticate` signs in through the credentials callback (the
   * same CSRF check, door, session and answer as a password), `register` adds a passkey to the
   * signed-in account (the account wing's).
   */
  async function passkeyCallback(request: FastifyRequest, reply: FastifyReply) {
    const passkeys = deps.passkeys;
    if (passkeys === undefined) return sendError(reply, new HttpError('not_found'));
    const secure = isSecure(request, publicOrigin);
    const route = routeOf(request);
    assertSameOrigin(request, route.path);
    const body = guardAuthBody(request);
    const action = passkeyActionOf(request, body);
    if (action === 'register') return passkeys.register(request, reply);
    if (action !== 'authenticate') {
      throw new HttpError('bad_request', {}, 'The action must be authenticate or register.');
    }
    return enterSignIn(request, reply, () =>
      bridge.answer(request, reply, { ...route, path: callbackPath, body, secure, passkey: true }),
    );
  }

  /** `GET /api/auth/webauthn-options/passkey` (the account wing's). */
  async function passkeyOptions(request: FastifyRequest, reply: FastifyReply) {
    if (deps.passkeys === undefined) return sendError(reply, new HttpError('not_found'));
    return deps.passkeys.options(request, reply);
  }

  /**
   * `GET /api/auth/enrolment/totp` (SECOND_FACTOR=required): for an app whose user got
   * `second_factor_enrolment_required`, the authenticator app's key its challenge enrols, to show
   * before the code is sent back through the credentials callback. 401 without a live challenge
   * of an account to enrol; 404 unless factors are required.
   */
  async function enrolmentKey(request: FastifyRequest, reply: FastifyReply) {
    if (deps.enrolment === undefined) return sendError(reply, new HttpError('not_found'));
    const challenge = parseCookies(request.headers.cookie).get(
      secondStepCookieName(isSecure(request, publicOrigin)),
    );
    let key: EnrolmentKey | null = null;
    try {
      if (challenge !== undefined && challenge !== '') key = await deps.enrolment.keyFor(challenge);
    } catch (error) {
      // Only the store's failure is a 503; anything else is a bug, logged, and a bare 500.
      if (!(error instanceof StoreUnavailableError)) {
        request.log.error({ err: error }, 'enrolment read failed');
        return sendError(reply, new HttpError('internal_error'));
      }
      request.log.error({ err: error.cause }, 'database unavailable during an enrolment read');
      return sendError(reply, storeUnavailable());
    }
    if (key === null)
      return sendError(
        reply,
        new HttpError(
          'unauthenticated',
          {},
          'No sign-in is waiting for an enrolment here: sign in with the password first.',
        ),
      );
    return reply.code(200).header('cache-control', 'no-store').send(key);
  }

  /** A session or CSRF read: session-read's fast branch unless it is Auth.js's. */
  const read = (action: 'session' | 'csrf') =>
    routeRead({ fastReader, frontRead, publicOrigin, toAuthjs }, action);

  // Gatehouse's pages answer GET and HEAD; a POST to /signout stays Auth.js's.
  const page = (action: 'signin' | 'signout') =>
    async function showPage(request: FastifyRequest, reply: FastifyReply) {
      if (request.method === 'POST' || pages === undefined) return toAuthjs(request, reply);
      const at = request.url.indexOf('?');
      const query = at === -1 ? '' : request.url.slice(at);
      const view = await pageView(request, query);
      if (view instanceof Response) return sendWebResponse(reply, view);
      const enrolmentKey = action === 'signin' ? await enrolmentKeyFor(request, query) : undefined;
      if (enrolmentKey === 'unavailable') return sendError(reply, storeUnavailable());
      return pages.show(action, request, reply, {
        ...view,
        signedIn: await signedInFor(request),
        ...(enrolmentKey != null && { enrolmentKey }),
      });
    };

  /**
   * `/`: the sign-in page for a visitor who is not signed in; who is signed in (or
   * SIGNED_IN_URL) for one who is. Read through the same session check as every session read,
   * so a revoked session is nobody. It does not slide the session: only session reads do.
   */
  async function home(request: FastifyRequest, reply: FastifyReply) {
    if (pages === undefined || deps.signedInUser === undefined) {
      return sendError(reply, new HttpError('not_found'));
    }
    const secure = isSecure(request, publicOrigin);
    const origin = originOf(request, publicOrigin);
    let user: SignedInUser | null;
    try {
      user = await deps.signedInUser(request.headers.cookie, secure);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      request.log.error({ err: error.cause }, 'database unavailable during session read');
      return sendError(reply, storeUnavailable());
    }
    const target = pages.homeRedirect(origin, user);
    if (target !== undefined || user === null) {
      return reply
        .code(303)
        .headers({ location: target ?? `${origin}${authBasePath}/signin` })
        .send();
    }
    const view = await pageView(request, '');
    if (view instanceof Response) return sendWebResponse(reply, view);
    return pages.home(reply, { ...view, signedIn: user });
  }
  app.route({ method: ['GET', 'HEAD'], url: '/', handler: home });

  const handlers: Record<AuthAction, typeof toAuthjs> = {
    session: read('session'),
    csrf: read('csrf'),
    providers: toAuthjs,
    signin: page('signin'),
    'signin/credentials': toAuthjs,
    'callback/credentials': toAuthjs,
    signout: page('signout'),
    error: toAuthjs,
    'webauthn-options/passkey': passkeyOptions,
    'callback/passkey': passkeyCallback,
    'enrolment/totp': enrolmentKey,
  };
  // A browser's sign-in form post: a failure's answer keeps the email for the page, a success
  // forgets it (src/pages/signin/kept-email.ts). Other callers' answers are left as they are.
  const keepEmail = (request: FastifyRequest, reply: FastifyReply) =>
    pages?.afterSignInPost(request, reply, isSecure(request, publicOrigin));
  for (const [action, handler] of Object.entries(handlers)) {
    const methods = authRoutes[action as AuthAction];
    const url = `${authBasePath}/${action}`;
    if (!signInPaths.has(url)) {
      app.route({ method: [...methods], url, handler });
      continue;
    }
    app.route({
      method: [...methods],
      url,
      handler,
      onSend: (request, reply, payload, done) => {
        keepEmail(request, reply);
        done(null, payload);
      },
    });
  }
  return { pageView };
}
