import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { authBasePath } from '../auth/bridge/auth-config.js';
import type { SessionAccess } from '../auth/session/session-access.js';
import type { Throttle } from '../auth/signin/throttle.js';
import type { ThrottleStore } from '../auth/signin/throttle-store.js';
import { isSecure, originOf } from '../auth/request/request-site.js';
import type { PageViewOf } from '../auth/bridge/routes.js';
import type { PageSettings } from '../config/page-settings.js';
import type { Database } from '../db/schema.js';
import type { Site } from '../http/site.js';
import type { MailQueue } from '../mail/mail-queue.js';
import { createAccountPages } from '../pages/account/account-pages.js';
import type { PasswordHasher } from '../users/hasher.js';
import type { UserStore } from '../users/store.js';
import type { AccountAction, AccountDeps, ActionResult, AnonymousAction } from './action.js';
import { createPerform } from './adapter.js';
import { createLinkOrigin } from './link-origin.js';
import { createDeviceCookies } from '../auth/cookies/device-cookie.js';
import { createPacedWork } from './paced-work.js';
import { acceptInvitationAction } from './invitation/accept.js';
import { changeEmail } from './email/change-email.js';
import { changePassword } from './self/change-password.js';
import { forgotPassword } from './reset/forgot.js';
import { listOwnEvents } from './self/list-events.js';
import { listOwnSessions, revokeOtherSessions, revokeOwnSession } from './self/sessions.js';
import { lockAccountAction } from './lock/lock.js';
import { updateProfile } from './self/profile.js';
import { reauthenticate } from './self/reauthenticate.js';
import { resendVerification } from './email/resend-verification.js';
import { resetPasswordAction } from './reset/reset.js';
import { showAccount } from './self/show.js';
import { verifyEmail } from './email/verify-address.js';
import { signUpAction } from './signup/signup.js';
import type { FlowPorts } from './adapter.js';
import { createCsrfGuard } from './csrf-guard.js';
import { record } from './model/events.js';
import type { Factor } from './factors.js';
import type { TotpPorts } from './totp/factor-ports.js';
import type { SecondStep } from './totp/second-step.js';
import { confirmTotp } from './totp/confirm.js';
import { disableTotp } from './totp/disable.js';
import { regenerateRecoveryCodes } from './totp/regenerate.js';
import { setupTotp } from './totp/setup.js';
import { deletePasskey, listPasskeys, renamePasskey } from './passkeys/actions.js';
import type { Passkeys } from './passkeys/passkeys.js';
import { createGuards } from './guards.js';
import { createMailRequestLimits, type MailRequestLimits } from './mail-limits.js';
import { keyCodeDigests } from './model/secrets.js';
import { registerInvitationPages } from './invitation/invitation-page.js';
import { registerLockPages } from './lock/lock-pages.js';
import { registerVerifyPages } from './email/verify-pages.js';
import { registerResetPages, type ResetPageSettings } from './reset/reset-pages.js';
import { registerSignupPages, type SignupPageSettings } from './signup/signup-page.js';
import { createPasswordProof } from './model/account-password-proof.js';
import { accountPagePaths, registerAccountPages } from './self/account-page-routes.js';
import { readBody } from './request-body.js';
import { createAccountStore } from './model/account-store.js';
import { accountBasePath, pagePathsUnder, type PagePaths } from './paths.js';

export { accountBasePath };

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
  /** A second factor's route: absent (404) when SECOND_FACTOR=off. */
  needsFactors?: boolean;
} & (
  | { guard: 'session' | 'recent'; action: AccountAction }
  | { guard: 'none'; action: AnonymousAction }
);

/** Every /api/account route, read as a table. */
/**
 * The after-answer queue's clock: a forgot's mail is queued at most this much later, and a
 * request meets that work only when it arrives during a tick, whatever the address was.
 */
const afterAnswerTickMs = 250;

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
  '/sessions': { method: 'GET', guard: 'session', action: listOwnSessions },
  '/sessions/revoke-others': { method: 'POST', guard: 'session', action: revokeOtherSessions },
  '/sessions/:id/revoke': { method: 'POST', guard: 'session', action: revokeOwnSession },
  '/totp/setup': { method: 'POST', guard: 'recent', action: setupTotp, needsFactors: true },
  '/totp/confirm': { method: 'POST', guard: 'recent', action: confirmTotp, needsFactors: true },
  '/totp/disable': { method: 'POST', guard: 'recent', action: disableTotp, needsFactors: true },
  '/recovery-codes': {
    method: 'POST',
    guard: 'recent',
    action: regenerateRecoveryCodes,
    needsFactors: true,
  },
  '/passkeys': { method: 'GET', guard: 'session', action: listPasskeys },
  '/passkeys/:id/rename': { method: 'POST', guard: 'session', action: renamePasskey },
  '/passkeys/:id/remove': { method: 'POST', guard: 'recent', action: deletePasskey },
};

/**
 * Every flow's pages, read as a table: their paths (each GET, HEAD and POST), whether they are a
 * mail flow (absent, 404, when mail is off) and the flow's registration.
 */
const pageFlows: readonly {
  paths: (pages: PagePaths) => readonly string[];
  needsMail: boolean;
  register: (scope: FastifyInstance, flow: FlowPorts, settings: PageFlowSettings) => void;
}[] = [
  { paths: (p) => [p.forgot, p.reset], needsMail: true, register: registerResetPages },
  { paths: (p) => [p.lock], needsMail: true, register: registerLockPages },
  { paths: (p) => [p.verify], needsMail: true, register: registerVerifyPages },
  // Not a mail flow: `gatehouse users invite --print-link` works without mail.
  { paths: (p) => [p.invitation], needsMail: false, register: registerInvitationPages },
  {
    paths: (p) => [p.signup, p.signupConfirm],
    needsMail: true,
    register: registerSignupPages,
  },
];

/** What every flow's pages are configured with. */
type PageFlowSettings = ResetPageSettings & SignupPageSettings;

/**
 * Every path the wing serves with mail on or off and with the `/account` page or without: the
 * JSON routes, the flows' pages and the account page's own (the OpenAPI check lists them from
 * here), path parameters written as OpenAPI writes them. The pages under ACCOUNT_PAGES_PATH
 * (`/account` unless `pagesPath` says otherwise).
 */
export function accountPaths(served: {
  mail: boolean;
  accountPage: boolean;
  factors?: boolean;
  pagesPath?: string;
}): string[] {
  const pages = pagePathsUnder(served.pagesPath);
  const wanted = (route: { needsMail?: boolean }) => route.needsMail !== true || served.mail;
  // In OpenAPI's form: a path parameter `:id` is `{id}`.
  return [
    ...Object.entries(allRoutes)
      .filter(([, route]) => wanted(route))
      .filter(([, route]) => route.needsFactors !== true || served.factors !== false)
      // A path parameter as OpenAPI writes it (`{id}`), not as Fastify does (`:id`).
      .map(([path]) => `${accountBasePath}${path.replace(/:(\w+)/g, '{$1}')}`),
    ...pageFlows.filter(wanted).flatMap((flow) => flow.paths(pages)),
    ...(served.accountPage ? accountPagePaths(pages, served.mail, served.factors !== false) : []),
  ].map((path) => path.replace(/:([a-z]+)/g, '{$1}'));
}

export interface AccountSettings {
  authSecrets: readonly string[];
  authUrl: string | undefined;
  /** AUTH_TRUST_HOST: without AUTH_URL, mailed links may follow the Host header. */
  authTrustHost?: boolean | undefined;
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
  /** SESSION_MAX_AGE and SESSION_ABSOLUTE_MAX_AGE, for the sessions list. */
  sessionLifetime: AccountDeps['sessionLifetime'];
}

export interface AccountRegistration {
  config: AccountSettings;
  db: Kysely<Database>;
  users: UserStore;
  throttle: Throttle;
  hasher: PasswordHasher;
  /** The auth wing's session read (src/auth/register.ts). */
  sessions: SessionAccess;
  /** Where the pages live (ACCOUNT_PAGES_PATH): the mails' links follow it too. */
  pages: PagePaths;
  /** The auth wing's CSRF token for pages; without it, no `/account` pages. */
  pageView?: PageViewOf;
  /** The mail outbox when mail is on (src/account/wing.ts decides); without it the mail flows answer 404. */
  mail?: MailQueue | undefined;
  /** The throttle table's store (src/auth/signin/throttle-store.ts), for the mail request limits. */
  throttleStore: ThrottleStore;
  /** The registered second factors (src/account/wing.ts builds them). */
  factors: readonly Factor[];
  /** TOTP's routes; undefined when SECOND_FACTOR=off (they answer 404). */
  totp: TotpPorts | undefined;
  secondStep: SecondStep;
  /** Passkeys' Auth.js routes, bound here to the account routes' guards. */
  passkeys?: Passkeys;
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
  const { mail } = deps;
  // Production without SMTP_URL: the mail flows do not exist (the spec's 404).
  const routes = Object.fromEntries(
    Object.entries(allRoutes).filter(
      ([, route]) =>
        (route.needsMail !== true || mail !== undefined) &&
        (route.needsFactors !== true || deps.totp !== undefined),
    ),
  );
  const guards = createGuards({
    sessions: deps.sessions,
    users: deps.users,
    store,
    reauthMaxAgeSeconds: config.reauthMaxAgeSeconds,
    now,
  });
  // After-answer work runs off the request's path; the service's stop runs what is left.
  const afterAnswer = createPacedWork({ tickMs: afterAnswerTickMs, maxQueued: 10_000, log });
  site.app.addHook('onClose', () => afterAnswer.drain());
  const actionDeps: AccountDeps = {
    db: deps.db,
    users: deps.users,
    store,
    sessions: deps.sessions,
    hasher: deps.hasher,
    provePassword: createPasswordProof({
      deviceCookies: createDeviceCookies(config.authSecrets),
      throttle: deps.throttle,
      hasher: deps.hasher,
      now,
    }),
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
    signupOpen: config.signupOpen === true,
    factors: deps.factors,
    sessionLifetime: config.sessionLifetime,
    afterAnswer,
    totp: deps.totp,
    secondStep: deps.secondStep,
    log,
  };
  // Redirects follow the request's origin, as Auth.js's do; mailed links follow the stricter rule.
  const publicOriginOf = (request: FastifyRequest) => originOf(request, config.authUrl);
  const linkOriginOf = createLinkOrigin({
    authUrl: config.authUrl,
    authTrustHost: config.authTrustHost,
    log,
  });
  const perform = createPerform(actionDeps, {
    originOf: linkOriginOf,
    pages: deps.pages,
    sessions: deps.sessions,
  });
  const flow = { deps: actionDeps, perform };
  const assertCsrf = createCsrfGuard({
    secrets: config.authSecrets,
    originOf: (request) => originOf(request, config.authUrl),
    secureOf: (request) => isSecure(request, config.authUrl),
  });

  deps.passkeys?.bind({ guards, assertCsrf });

  site.declareRoutes(
    Object.fromEntries(
      Object.entries(routes).map(([path, route]) => [
        `${accountBasePath}${path}`,
        route.method === 'GET' ? ['GET', 'HEAD'] : ['POST'],
      ]),
    ),
  );
  const flows = pageFlows.filter((flow) => !flow.needsMail || mail !== undefined);
  for (const flow of flows)
    site.declareRoutes(
      Object.fromEntries(flow.paths(deps.pages).map((path) => [path, ['GET', 'HEAD', 'POST']])),
    );
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
        // A path's `{id}` is a field as the body's are (and wins over one the body names).
        const body = {
          ...(request.method === 'POST' ? readBody(request) : {}),
          ...(request.params as Record<string, string>),
        };
        if (request.method === 'POST') assertCsrf(request, body);
        let result: ActionResult;
        if (route.guard === 'none') {
          result = await perform(route.action, request, reply, body);
        } else {
          const signedIn = await guards.session(request);
          if (route.guard === 'recent') await guards.recent(signedIn);
          result = await perform(route.action, request, reply, body, signedIn);
        }
        return reply.code(result.status ?? route.status ?? 200).send(result.body);
      };
      scope.route({ method: route.method, url: `${accountBasePath}${path}`, handler });
    }
    for (const pageFlow of flows) pageFlow.register(scope, flow, config);
    done();
  });
  // The same actions behind HTML pages (`/account`), for browsers without script.
  if (deps.pageView !== undefined) {
    registerAccountPages(site, {
      actionDeps,
      perform,
      guards,
      assertCsrf,
      pageView: deps.pageView,
      pages: createAccountPages(authBasePath, config.page),
      pagePaths: deps.pages,
      originOf: publicOriginOf,
      bodyLimitBytes: config.bodyLimitBytes,
    });
  }
}
