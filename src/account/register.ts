import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { authBasePath } from '../auth/auth-config.js';
import type { SessionAccess } from '../auth/session-access.js';
import type { Throttle } from '../auth/throttle.js';
import type { ThrottleStore } from '../auth/throttle-store.js';
import { isSecure, originOf } from '../auth/request-site.js';
import type { PageViewOf } from '../auth/routes.js';
import type { PageSettings } from '../config/page-settings.js';
import type { Database } from '../db/schema.js';
import type { Site } from '../http/site.js';
import type { MailQueue } from '../mail/mail-queue.js';
import { createAccountPages } from '../pages/account-pages.js';
import { invitationPath } from './invitation/invitation-views.js';
import { signupConfirmPagePath, signupPagePath } from './signup/signup-views.js';
import type { PasswordHasher } from '../users/hasher.js';
import type { UserStore } from '../users/store.js';
import { runAction, type AccountAction, type AccountDeps, type AnonymousAction } from './action.js';
import { acceptInvitationAction } from './invitation/accept.js';
import { changeEmail } from './email/change-email.js';
import { changePassword } from './self/change-password.js';
import { forgotPassword } from './reset/forgot.js';
import { listOwnEvents } from './self/list-events.js';
import { lockAccountAction } from './lock/lock.js';
import { updateProfile } from './self/profile.js';
import { reauthenticate } from './self/reauthenticate.js';
import { resendVerification } from './email/resend-verification.js';
import { resetPasswordAction } from './reset/reset.js';
import { showAccount } from './self/show.js';
import { verifyEmail } from './email/verify.js';
import { signUpAction } from './signup/signup.js';
import { createCsrfGuard } from './csrf-guard.js';
import { record } from './model/events.js';
import { registeredFactors } from './factors.js';
import { createGuards } from './guards.js';
import { createMailRequestLimits, type MailRequestLimits } from './mail-limits.js';
import { keyCodeDigests } from './model/secrets.js';
import { registerInvitationPages } from './invitation/invitation-page.js';
import { lockPagePaths, registerLockPages } from './lock/lock-pages.js';
import { registerVerifyPages, verifyPagePaths } from './email/verify-pages.js';
import { registerResetPages, resetPagePaths } from './reset/reset-pages.js';
import { registerSignupPages } from './signup/signup-page.js';
import { createPasswordProof } from './model/password-proof.js';
import { registerAccountPages } from './self/account-page-routes.js';
import { readBody } from './request-body.js';
import { createAccountStore } from './model/account-store.js';

export const accountBasePath = '/api/account';

/**
 * Who may call a route: (session), or (recent) on top of it (accounts spec, Conventions), or
 * anyone (`none`: the e-mailed-secret flows; CSRF still holds for every POST).
 */
type Route = {
  method: 'GET' | 'POST';
  /** The success status (200 unless the spec says otherwise). */
  status?: number;
  /** A mail flow: absent (404) when mail is off (production without SMTP_URL). */
  needsMail?: boolean;
} & (
  | { guard: 'session' | 'recent'; action: AccountAction }
  | { guard: 'none'; action: AnonymousAction }
);

/** Every /api/account route, read as a table. */
const allRoutes: Record<string, Route> = {
  '': { method: 'GET', guard: 'session', action: showAccount },
  '/profile': { method: 'POST', guard: 'session', action: updateProfile },
  '/reauthenticate': { method: 'POST', guard: 'session', action: reauthenticate },
  '/password/change': { method: 'POST', guard: 'session', action: changePassword },
  '/password/forgot': {
    method: 'POST',
    guard: 'none',
    action: forgotPassword,
    status: 202,
    needsMail: true,
  },
  '/password/reset': {
    method: 'POST',
    guard: 'none',
    action: resetPasswordAction,
    needsMail: true,
  },
  '/lock': { method: 'POST', guard: 'none', action: lockAccountAction, needsMail: true },
  // Not a mail flow: `gatehouse users invite --print-link` works without mail.
  '/invitation/accept': { method: 'POST', guard: 'none', action: acceptInvitationAction },
  '/email/verify': { method: 'POST', guard: 'none', action: verifyEmail, needsMail: true },
  '/email/verification': {
    method: 'POST',
    guard: 'session',
    action: resendVerification,
    status: 202,
    needsMail: true,
  },
  '/email/change': {
    method: 'POST',
    guard: 'recent',
    action: changeEmail,
    status: 202,
    needsMail: true,
  },
  '/signup': { method: 'POST', guard: 'none', action: signUpAction, status: 202, needsMail: true },
  '/events': { method: 'GET', guard: 'session', action: listOwnEvents },
};

export interface AccountSettings {
  authSecrets: readonly string[];
  authUrl: string | undefined;
  bodyLimitBytes: number;
  /** REAUTH_MAX_AGE. */
  reauthMaxAgeSeconds: number;
  /** PASSWORD_MIN_LENGTH. */
  passwordMinLength: number;
  /** MAIL_TOKEN_TTL. */
  mailTokenTtlSeconds: number;
  /** SIGNUP=open; closed when absent. */
  signupOpen?: boolean | undefined;
  /** The sign-in throttle's numbers, which mail requests are limited by too. */
  mailRequestLimits: MailRequestLimits;
  /** The pages' branding, as the sign-in page has it (the reset pages look the same). */
  page?: PageSettings | undefined;
}

export interface AccountRegistration {
  config: AccountSettings;
  db: Kysely<Database>;
  users: UserStore;
  throttle: Throttle;
  hasher: PasswordHasher;
  /** The auth wing's session read (src/auth/register.ts). */
  sessions: SessionAccess;
  /** The auth wing's CSRF token for pages; without it, no `/account` pages. */
  pageView?: PageViewOf;
  /** The mail outbox; without it (or not `enabled`) the mail flows answer 404. */
  mail?: MailQueue;
  /** The throttle table's store (src/auth/throttle-store.ts), for the mail request limits. */
  throttleStore: ThrottleStore;
}

/**
 * `/api/account/*`: JSON or form bodies, `Cache-Control: no-store`, and before each action
 * the CSRF check (every POST), then the (session) or (recent) guard.
 */
export function registerAccount(site: Site, deps: AccountRegistration): void {
  const { config } = deps;
  keyCodeDigests(config.authSecrets);
  const now = site.now;
  const store = createAccountStore(deps.db);
  const log = site.app.log;
  const mail = deps.mail?.enabled === true ? deps.mail : undefined;
  // Production without SMTP_URL: the mail flows do not exist (the spec's 404).
  const routes = Object.fromEntries(
    Object.entries(allRoutes).filter(([, route]) => route.needsMail !== true || mail !== undefined),
  );
  const guards = createGuards({
    sessions: deps.sessions,
    users: deps.users,
    store,
    reauthMaxAgeSeconds: config.reauthMaxAgeSeconds,
    now,
  });
  const actionDeps: AccountDeps = {
    db: deps.db,
    users: deps.users,
    store,
    sessions: deps.sessions,
    hasher: deps.hasher,
    provePassword: createPasswordProof({ throttle: deps.throttle, hasher: deps.hasher, now }),
    passwordMinLength: config.passwordMinLength,
    now,
    recentUntil: guards.recentUntil,
    record: (event) =>
      record(deps.db, event).catch((error: unknown) => {
        log.error({ err: error, event: event.type }, 'could not record an account event');
      }),
    mail,
    throttle: deps.throttle,
    mailRequests: createMailRequestLimits(deps.throttleStore, config.mailRequestLimits, now),
    mailTokenTtlSeconds: config.mailTokenTtlSeconds,
    originOf: (request) => originOf(request, config.authUrl),
    signupOpen: config.signupOpen === true,
    factors: registeredFactors,
    log,
  };
  const assertCsrf = createCsrfGuard({
    secrets: config.authSecrets,
    originOf: (request) => originOf(request, config.authUrl),
    secureOf: (request) => isSecure(request, config.authUrl),
  });

  site.declareRoutes(
    Object.fromEntries(
      Object.entries(routes).map(([path, route]) => [
        `${accountBasePath}${path}`,
        route.method === 'GET' ? ['GET', 'HEAD'] : ['POST'],
      ]),
    ),
  );
  if (mail !== undefined)
    site.declareRoutes(
      Object.fromEntries(
        [...resetPagePaths, ...lockPagePaths, ...verifyPagePaths].map((path) => [
          path,
          ['GET', 'HEAD', 'POST'],
        ]),
      ),
    );
  site.declareRoutes({ [invitationPath]: ['GET', 'HEAD', 'POST'] });
  if (mail !== undefined)
    site.declareRoutes({
      [signupPagePath]: ['GET', 'HEAD', 'POST'],
      [signupConfirmPagePath]: ['GET', 'HEAD', 'POST'],
    });
  void site.app.register((scope, _options, done) => {
    scope.removeAllContentTypeParsers();
    // Bytes: parsed by readBody, so a malformed body is our 400 and not Fastify's.
    scope.addContentTypeParser(
      ['application/x-www-form-urlencoded', 'application/json'],
      { parseAs: 'buffer', bodyLimit: config.bodyLimitBytes },
      (_request, body, parsed) => parsed(null, body),
    );
    // Errors too: an account answer is never stored by a cache.
    scope.addHook('onSend', (_request, reply, payload, next) => {
      reply.header('cache-control', 'no-store');
      next(null, payload);
    });
    for (const [path, route] of Object.entries(routes)) {
      const handler = async (request: FastifyRequest, reply: FastifyReply) => {
        const body = request.method === 'POST' ? readBody(request) : {};
        if (request.method === 'POST') assertCsrf(request, body);
        let answer: unknown;
        if (route.guard === 'none') {
          answer = await runAction(route.action, actionDeps, { request, reply, body });
        } else {
          const signedIn = await guards.session(request);
          if (route.guard === 'recent') await guards.recent(signedIn);
          answer = await runAction(route.action, actionDeps, { request, reply, signedIn, body });
        }
        return reply.code(route.status ?? 200).send(answer);
      };
      scope.route({ method: route.method, url: `${accountBasePath}${path}`, handler });
    }
    if (mail !== undefined) {
      registerResetPages(scope, actionDeps, config);
      registerLockPages(scope, actionDeps, config);
      registerVerifyPages(scope, actionDeps, config);
    }
    registerInvitationPages(scope, actionDeps, config);
    if (mail !== undefined) registerSignupPages(scope, actionDeps, config);
    done();
  });
  // The same actions behind HTML pages (`/account`), for browsers without script.
  if (deps.pageView !== undefined) {
    registerAccountPages(site, {
      actionDeps,
      guards,
      assertCsrf,
      pageView: deps.pageView,
      pages: createAccountPages(authBasePath, config.page),
      originOf: (request) => originOf(request, config.authUrl),
      bodyLimitBytes: config.bodyLimitBytes,
    });
  }
}
