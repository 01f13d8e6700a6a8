import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../http/error-handler.js';
import type { HttpError } from '../../http/errors.js';
import type { Observer } from '../../observe/observer.js';
import type { AuthPages, PageView, SignedInUser } from '../../pages/signin/auth-pages.js';
import type { WorkGate } from '../../traffic/work-gate.js';
import { authBasePath, type AuthConfigFor } from './auth-config.js';
import { authjsBridge } from './authjs-bridge.js';
import { guardAuthBody } from '../request/body-guard.js';
import type { AccountEventSink } from '../request/account-events.js';
import type { SessionCookiePrefix } from '../cookies/cookie-names.js';
import type { FrontRead } from '../session/front-read.js';
import type { LegacyExchange } from '../session/legacy-exchange.js';
import { CrossSiteError, loginCsrfGuard } from '../signin/login-csrf-guard.js';
import { createPageCsrf } from './page-csrf.js';
import { homeRoute, pageRoute, type PageRouteDeps, type PageViewOf } from './page-routes.js';
import { exchangeFirst, routeRead } from '../session/route-read.js';
import { isSecure, originOf, routeOf } from '../request/request-site.js';
import type { FastReader } from '../session/session-read.js';
import { signInDoor } from '../signin/signin-door.js';
import type { MountedWaysIn, WireKit } from '../way-in.js';

export type { PageViewOf } from './page-routes.js';

type Method = 'GET' | 'POST';
type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/** The wing's own /api/auth routes, with their methods (a way in adds its own). */
const wingRoutes = {
  session: ['GET', 'POST'],
  csrf: ['GET'],
  providers: ['GET'],
  signin: ['GET'],
  'signin/credentials': ['POST'],
  'callback/credentials': ['POST'],
  signout: ['GET', 'POST'],
  error: ['GET'],
} as const satisfies Record<string, readonly Method[]>;

/**
 * `/api/auth/signout`: a sign-out post that holds an old app's session cookie exchanges it
 * first (LEGACY_AUTH_SECRET), so the sign-out ends that old token for good too.
 */
function signOutRoute(deps: AuthRouteDeps, page: Handler): Handler {
  if (deps.legacy === undefined) return page;
  const exchanging = exchangeFirst(deps.legacy, deps.publicOrigin, page);
  return async (request, reply) =>
    request.method === 'POST' ? exchanging(request, reply) : page(request, reply);
}

/** Every /api/auth route Gatehouse serves, with its methods (the rest is 404 or 405). */
export function authRoutes(
  waysIn: Pick<MountedWaysIn, 'routes'>,
): Record<string, readonly Method[]> {
  return {
    ...wingRoutes,
    ...Object.fromEntries(waysIn.routes.map((route) => [route.action, route.methods])),
  };
}

export interface AuthRouteDeps {
  configs: { http: AuthConfigFor; https: AuthConfigFor };
  /** Answers session and CSRF reads without Auth.js's pipeline (fast paths on). */
  fastReader: FastReader | undefined;
  /** The same reads answered in front of Fastify, when the site allows it. */
  frontRead: FrontRead | undefined;
  /** An old app's session cookies exchanged at the session read (LEGACY_AUTH_SECRET). */
  legacy?: LegacyExchange | undefined;
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
  /** The registered ways in (src/auth/way-in.ts): their routes and hooks. */
  waysIn: MountedWaysIn;
  /** The live session a request holds, for a way in's route (src/auth/way-in.ts). */
  heldSession: WireKit['heldSession'];
}

const callbackPath = `${authBasePath}/callback/credentials`;
const signInPaths = new Set([`${authBasePath}/signin/credentials`, callbackPath]);

/** The wing's guards and its bridge to Auth.js, for the handlers of every route. */
function createWire(deps: AuthRouteDeps) {
  const { publicOrigin, pages } = deps;
  /** What a page prints its form with: Auth.js's CSRF token and cookies for this browser. */
  const pageView: PageViewOf = async (request, query) => {
    const site = {
      origin: originOf(request, publicOrigin),
      secure: isSecure(request, publicOrigin),
    };
    const csrf = await pageCsrf(request, site, query);
    return csrf.ok ? { ...site, csrf } : csrf.response;
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
    providers: deps.waysIn.providers,
    refusalErrors: deps.waysIn.refusalErrors,
    afterSignIn: deps.waysIn.afterSignIn,
  });
  const pageCsrf = createPageCsrf({ fast: deps.fastReader, bridge });
  const wayInSignInPaths = deps.waysIn.routes
    .filter((route) => route.signsIn === true)
    .map((route) => `${authBasePath}/${route.action}`);
  const assertSameOrigin = loginCsrfGuard({
    signInPaths: new Set([...signInPaths, ...wayInSignInPaths]),
    originOf: (request) => originOf(request, publicOrigin),
    onSignInRefused: () => deps.observer.signIn('csrf'),
  });
  const enterSignIn = signInDoor({ gate: deps.signIns, observer: deps.observer, refuse });
  return { pageView, bridge, assertSameOrigin, enterSignIn };
}

type Wire = ReturnType<typeof createWire>;

/** Any action as Auth.js answers it, behind our guards (login CSRF, body, the sign-in door). */
function toAuthjsRoute(deps: AuthRouteDeps, wire: Wire): Handler {
  const { publicOrigin, pages } = deps;
  return async function toAuthjs(request, reply) {
    const secure = isSecure(request, publicOrigin);
    const route = routeOf(request);
    let body: Buffer | undefined;
    if (request.method === 'POST') {
      try {
        wire.assertSameOrigin(request, route.path);
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
    const answer = () => wire.bridge.answer(request, reply, { ...route, path, body, secure });
    return request.method === 'POST' && path === callbackPath
      ? wire.enterSignIn(request, reply, answer)
      : answer();
  };
}

/** What a way in's route may use of the wing: the scheme, the post guards, a sign-in. */
function wireKit(deps: AuthRouteDeps, wire: Wire): WireKit {
  const { publicOrigin } = deps;
  return {
    site: (request) => ({
      secure: isSecure(request, publicOrigin),
      origin: originOf(request, publicOrigin),
    }),
    guardPost(request) {
      wire.assertSameOrigin(request, routeOf(request).path);
      return guardAuthBody(request);
    },
    signIn(request, reply, body, via) {
      const route = routeOf(request);
      const secure = isSecure(request, publicOrigin);
      return wire.enterSignIn(request, reply, () =>
        wire.bridge.answer(request, reply, { ...route, path: callbackPath, body, secure, via }),
      );
    },
    toProvider(request, reply, via) {
      const route = routeOf(request);
      const secure = isSecure(request, publicOrigin);
      let body: Buffer | undefined;
      if (request.method === 'POST') {
        wire.assertSameOrigin(request, route.path);
        body = guardAuthBody(request);
      }
      const signsIn = route.path.startsWith(`${authBasePath}/callback/`);
      const answer = () =>
        wire.bridge.answer(request, reply, {
          ...route,
          body,
          secure,
          signsIn,
          ...(via !== undefined && { via }),
        });
      return signsIn ? wire.enterSignIn(request, reply, answer) : answer();
    },
    heldSession: deps.heldSession,
  };
}

/**
 * Mounts /api/auth/*: each action's handler from the table, the ways in's routes beside them.
 * Our checks come first (login CSRF, body, the sign-in door), then Auth.js
 * (src/auth/bridge/authjs-bridge.ts); session and CSRF reads go to session-read's fast branch,
 * the pages get what they print.
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
  const wire = createWire(deps);
  const toAuthjs = toAuthjsRoute(deps, wire);
  const pageDeps: PageRouteDeps = {
    pages: deps.pages,
    publicOrigin: deps.publicOrigin,
    signedInUser: deps.signedInUser,
    pageView: wire.pageView,
    signInPages: deps.waysIn.signInPages,
    toAuthjs,
  };
  const readDeps = { ...deps, toAuthjs };
  app.route({ method: ['GET', 'HEAD'], url: '/', handler: homeRoute(pageDeps) });
  const kit = wireKit(deps, wire);
  const handlers: Record<string, Handler> = {
    session: routeRead(readDeps, 'session'),
    csrf: routeRead(readDeps, 'csrf'),
    providers: toAuthjs,
    signin: pageRoute(pageDeps, 'signin'),
    'signin/credentials': toAuthjs,
    'callback/credentials': toAuthjs,
    signout: signOutRoute(deps, pageRoute(pageDeps, 'signout')),
    error: toAuthjs,
    ...Object.fromEntries(
      deps.waysIn.routes.map((route) => [
        route.action,
        async (request: FastifyRequest, reply: FastifyReply) => route.handler(request, reply, kit),
      ]),
    ),
  };
  // A browser's sign-in form post: a failure's answer keeps the email for the page, a success
  // forgets it (src/pages/signin/kept-email.ts). Other callers' answers are left as they are.
  const keepEmail = (request: FastifyRequest, reply: FastifyReply) =>
    deps.pages?.afterSignInPost(request, reply, isSecure(request, deps.publicOrigin));
  const methods = authRoutes(deps.waysIn);
  for (const [action, handler] of Object.entries(handlers)) {
    const url = `${authBasePath}/${action}`;
    const method = [...(methods[action] ?? [])];
    if (!signInPaths.has(url)) {
      app.route({ method, url, handler });
      continue;
    }
    app.route({
      method,
      url,
      handler,
      onSend: (request, reply, payload, done) => {
        keepEmail(request, reply);
        done(null, payload);
      },
    });
  }
  return { pageView: wire.pageView };
}
