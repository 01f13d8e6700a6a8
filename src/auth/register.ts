import { decode as authjsDecode } from '@auth/core/jwt';
import type { Config } from '../config/index.js';
import type { Site } from '../http/site.js';
import type { Observer } from '../observe/observer.js';
import { createAuthPages } from '../pages/signin/auth-pages.js';
import type { SessionStore } from '../sessions/session-store.js';
import type { PasswordHasher } from '../users/hasher.js';
import type { UserStore } from '../users/store.js';
import { WorkGate } from '../traffic/work-gate.js';
import { authBasePath, createAuthConfig } from './bridge/auth-config.js';
import type { SignInChallenges } from '../challenge/challenges.js';
import { createAuthorize } from './signin/authorize.js';
import { authCookieNames } from './cookies/cookie-names.js';
import { heldSessionToken, parseCookies } from './cookies/cookies.js';
import { createDeviceCookies } from './cookies/device-cookie.js';
import { createFrontRead } from './session/front-read.js';
import { createLegacyExchange, type LegacyExchange } from './session/legacy-exchange.js';
import type { LegacySessionStore } from '../users/legacy-sessions.js';
import type { JweCodec } from './session/jwe-codec.js';
import type { AccountEventSink } from './request/account-events.js';
import { authRoutes, registerAuthRoutes, type PageViewOf } from './bridge/routes.js';
import { mountWaysIn, type MountedWaysIn, type WayIn } from './way-in.js';
import { createSessionAccess, type SessionAccess } from './session/session-access.js';
import { createSessionClaims } from './session/session-claims.js';
import { createSessionRead, type FastReader } from './session/session-read.js';
import type { LastSeen } from '../sessions/last-seen.js';
import type { Throttle } from './signin/throttle.js';

export type AuthSettings = Pick<
  Config,
  'authSecrets' | 'authUrl' | 'sessionCookiePrefix' | 'session' | 'bodyLimitBytes' | 'fastPaths'
> &
  // Optional: apps built without it (tests) take no old sessions.
  Partial<Pick<Config, 'legacySessions'>> &
  // Optional: apps built without it (tests) get the default branding.
  Partial<Pick<Config, 'page'>>;

export interface AuthRegistration {
  config: AuthSettings;
  users: UserStore;
  sessions: SessionStore;
  throttle: Throttle;
  hasher: PasswordHasher;
  /** Gatehouse's synchronous JWE codec; used only while fast paths are on. */
  codec?: JweCodec;
  observer: Observer;
  /** The account's record of sign-ins and sign-outs (src/account/event-sink.ts). */
  events?: AccountEventSink;
  /** Where "Forgot your password?" leads (mail on); undefined: the sign-in page has no link. */
  forgotPasswordUrl?: string;
  /** Where "Create an account" leads (SIGNUP=open, mail on); undefined: no link. */
  signupUrl?: string;
  /**
   * The ways in (the account wing's registry, src/account/ways-in.ts): their checks after a
   * right password, routes and hooks, mounted in order; absent: the password alone.
   */
  waysIn?: readonly WayIn[];
  /** Where live session reads are noted for "last seen" (src/sessions/last-seen.ts); absent: not. */
  lastSeen?: Pick<LastSeen, 'seen'>;
  /** The sign-in challenge (src/challenge/); absent: every sign-in needs the password. */
  signInChallenges?: SignInChallenges;
  /** Old sessions exchanged (src/users/legacy-sessions.ts); used with LEGACY_AUTH_SECRET. */
  legacySessions?: LegacySessionStore;
}

/** What other route groups use of the auth wing. */
export interface AuthRegistered {
  /** The session behind a request, read as every session read is. */
  sessions: SessionAccess;
  /** Auth.js's CSRF token and cookies for a page's forms, as the sign-in page gets them. */
  pageView: PageViewOf;
}

/**
 * Every `/api/auth` path with the methods it answers (GET routes answer HEAD too), and `/`:
 * the pages' landing (the sign-in page, or who is signed in).
 */
function authPaths(waysIn: MountedWaysIn): Record<string, readonly string[]> {
  return {
    ...Object.fromEntries(
      Object.entries(authRoutes(waysIn)).map(([action, methods]) => [
        `${authBasePath}/${action}`,
        methods.includes('GET') ? [...methods, 'HEAD'] : methods,
      ]),
    ),
    '/': ['GET', 'HEAD'],
  };
}

/** What the session access outside Auth.js's routes takes of the configuration. */
const sessionAccessSettings = (config: AuthSettings) => ({
  sessionCookiePrefix: config.sessionCookiePrefix,
  publicOrigin: config.authUrl,
  secrets: config.authSecrets,
  maxAgeSeconds: config.session.maxAgeSeconds,
});

/** How session tokens are read for the pages and the bridge, as Auth.js reads them. */
function sessionTokens(
  config: AuthSettings,
  decode: JweCodec['decode'] | typeof authjsDecode,
  live: ReturnType<typeof createSessionRead>['live'],
) {
  /** A session token as Auth.js reads it (same codec, same salt); unreadable is `null`. */
  const decodeSessionToken = async (token: string, secure: boolean) => {
    try {
      const salt = authCookieNames(secure, config.sessionCookiePrefix).session;
      return await decode({ token, salt, secret: [...config.authSecrets] });
    } catch {
      // An unreadable token names no session.
      return null;
    }
  };
  /**
   * Who a request's session cookie signs in, for the pages: the token read as Auth.js reads it,
   * then `live` (expiry, cap, revocation, the user), as every session read. `null`: nobody.
   * Throws StoreUnavailableError when the store cannot say.
   */
  const signedInUser = async (cookieHeader: string | undefined, secure: boolean) => {
    const name = authCookieNames(secure, config.sessionCookiePrefix).session;
    const held = await heldSessionToken(
      parseCookies(cookieHeader),
      name,
      async (whole) => (await decodeSessionToken(whole, secure)) !== null,
    );
    if (held.token === undefined) return null;
    const payload = await decodeSessionToken(held.token, secure);
    const claims = payload === null ? null : await live(payload);
    return claims === null ? null : { name: claims.name, email: claims.email };
  };
  return { decodeSessionToken, signedInUser };
}

/**
 * Up to two sign-ins in Auth.js per hash slot: one does its database work while the other
 * hashes, so the hasher never idles. The second waits in the hasher's queue, so there are only
 * as many as that queue holds, and the hasher never refuses a sign-in let in. The rest wait at
 * the door, in a queue as long as the hasher's. One client address may fill a quarter of the
 * queue (at least one place), so a flood from one address leaves room for everyone else, who
 * are then let in round-robin.
 */
function signInGate(hasher: PasswordHasher): WorkGate {
  const { concurrency, queueMax } = hasher.limits;
  return new WorkGate(
    concurrency + Math.min(concurrency, queueMax),
    queueMax,
    Math.max(1, Math.ceil(queueMax / 4)),
  );
}

/** The session reads answered in front of Fastify, when the site allows it and fast paths are on. */
function frontReadFor(
  site: Site,
  config: AuthSettings,
  fastReader: FastReader | undefined,
  legacy: LegacyExchange | undefined,
) {
  const frontRead =
    site.answersInFront && fastReader !== undefined
      ? createFrontRead({
          reader: fastReader,
          declines: legacy?.mayHold,
          publicOrigin: config.authUrl,
          isDraining: site.isDraining,
          log: () => site.app.log,
          nextRequestId: site.nextRequestId,
          logsAnswer: site.logsAnswer,
          accessLine: site.accessLine,
        })
      : undefined;
  if (frontRead !== undefined) site.addFront(frontRead.front);
  return frontRead;
}

/** Sign-in's check of what was typed (src/auth/signin/authorize.ts), with the ways in's checks. */
function authorizeFor(site: Site, deps: AuthRegistration, waysIn: MountedWaysIn) {
  return createAuthorize({
    users: deps.users,
    hasher: deps.hasher,
    throttle: deps.throttle,
    deviceCookies: createDeviceCookies(deps.config.authSecrets),
    checks: waysIn.checks,
    challenges: deps.signInChallenges,
    challengeOpenedBy: waysIn.challengeOpenedBy,
    now: site.now,
    log: site.app.log,
  });
}

/** The exchange of an old app's session cookies, while LEGACY_AUTH_SECRET is set. */
function legacyExchangeFor(site: Site, deps: AuthRegistration): LegacyExchange | undefined {
  const { config } = deps;
  if (config.legacySessions === undefined || deps.legacySessions === undefined) return undefined;
  return createLegacyExchange({
    settings: config.legacySessions,
    store: deps.legacySessions,
    sessions: deps.sessions,
    secrets: config.authSecrets,
    sessionCookiePrefix: config.sessionCookiePrefix,
    maxAgeSeconds: config.session.maxAgeSeconds,
    now: site.now,
    events: deps.events,
    log: site.app.log,
  });
}

/**
 * `/api/auth/*`: Auth.js with the Credentials provider, server-side sessions, the sign-in door,
 * Gatehouse's pages, the registered ways in, and the session and CSRF reads answered without
 * Auth.js's pipeline (in front of Fastify when the site allows it) while fast paths are on.
 */
export function registerAuth(site: Site, deps: AuthRegistration): AuthRegistered {
  const { config } = deps;
  const now = site.now;
  const codec = config.fastPaths ? deps.codec : undefined;
  const waysIn = mountWaysIn(deps.waysIn ?? []);
  const authorize = authorizeFor(site, deps, waysIn);
  // One answer to "is this a live session, and what is the answer?" (src/auth/session/session-read.ts),
  // for Auth.js's jwt callback and, with fast paths on, for the reads answered without Auth.js.
  const read = createSessionRead({
    sessions: deps.sessions,
    secrets: config.authSecrets,
    session: config.session,
    sessionCookiePrefix: config.sessionCookiePrefix,
    now,
    codec,
    seen: deps.lastSeen?.seen,
  });
  const { decodeSessionToken, signedInUser } = sessionTokens(
    config,
    codec?.decode ?? authjsDecode,
    read.live,
  );
  const configFor = (secure: boolean) =>
    createAuthConfig(
      {
        secrets: config.authSecrets,
        session: config.session,
        sessionCookiePrefix: config.sessionCookiePrefix,
        authorize,
        refusalErrors: waysIn.refusalErrors,
        providers: waysIn.authjsProviders,
        claims: createSessionClaims({
          sessions: deps.sessions,
          read,
          now,
          log: site.app.log,
          decodeSessionToken: (token) => decodeSessionToken(token, secure),
        }),
        log: site.app.log,
        codec,
      },
      secure,
    );
  const sessions = createSessionAccess({
    ...sessionAccessSettings(config),
    now,
    decode: decodeSessionToken,
    live: read.live,
    codec,
  });
  const fastReader = read.fast;
  const legacy = legacyExchangeFor(site, deps);
  const frontRead = frontReadFor(site, config, fastReader, legacy);
  const signIns = signInGate(deps.hasher);
  deps.observer.watchDoor(signIns);
  site.declareRoutes(authPaths(waysIn));
  // Set when the routes are registered (Fastify runs plugins before it listens, so before any
  // request can ask).
  let pageView: PageViewOf | undefined;
  void site.app.register((scope, _options, done) => {
    ({ pageView } = registerAuthRoutes(scope, {
      configs: { http: configFor(false), https: configFor(true) },
      fastReader,
      frontRead,
      legacy,
      sessionCookiePrefix: config.sessionCookiePrefix,
      readsAsSessionToken: async (token, secure) =>
        (await decodeSessionToken(token, secure)) !== null,
      publicOrigin: config.authUrl,
      bodyLimitBytes: config.bodyLimitBytes,
      signIns,
      pages: createAuthPages(authBasePath, config.page, deps.forgotPasswordUrl, deps.signupUrl),
      signedInUser,
      observer: deps.observer,
      ...(deps.events !== undefined && { events: deps.events }),
      waysIn,
      heldSession: async (request) =>
        sessions
          .current(request)
          .then((held) => held && { userId: held.claims.sub, sessionId: held.claims.sid }),
    }));
    done();
  });
  return {
    sessions,
    pageView(request, query) {
      if (pageView === undefined) throw new Error('the auth routes are not registered yet');
      return pageView(request, query);
    },
  };
}
