import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { IdentityProviderSetting } from '../config/identity-providers.js';
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
import type { AccountDeps, AccountOperation, ActionResult } from './action.js';
import { createLinkOrigin, createPerform, type FlowPorts, type Perform } from './adapter.js';
import { createDeviceCookies } from '../auth/cookies/device-cookie.js';
import type { PacedWork } from './paced-work.js';
import { createCsrfGuard } from './csrf-guard.js';
import { record } from './model/events.js';
import type { Factor } from './second-factors.js';
import type { TotpPorts } from './totp/factor-ports.js';
import type { SecondStep } from './totp/second-step.js';
import type { Passkeys } from './passkeys/passkeys.js';
import { createGuards, type Guards } from './guards.js';
import { createMailRequestLimits, type MailRequestLimits } from './mail-limits.js';
import { keyCodeDigests } from './model/secrets.js';
import { registerInvitationPages } from './invitation/invitation-page.js';
import { registerLockPages } from './lock/lock-pages.js';
import { registerVerifyPages } from './email/verify-pages.js';
import { registerResetPages, type ResetPageSettings } from './reset/reset-pages.js';
import { registerSignupPages, type SignupPageSettings } from './signup/signup-page.js';
import { createPasswordProof } from './model/account-password-proof.js';
import { registerAccountPages } from './self/account-page-routes.js';
import { readBody } from './request-body.js';
import type { FlowPages } from './flow-page.js';
import { createPageKit } from './page-kit.js';
import { createAccountStore, type AccountStore } from './model/account-store.js';
import { accountPagePaths, servedOperations } from './account-operations.js';
import { accountBasePath, pagePathsUnder, type PagePaths } from './paths.js';

export { accountBasePath };

/**
 * Every flow's pages, read as a table: their paths (each GET, HEAD and POST), whether they are a
 * mail flow (absent, 404, when mail is off) and the flow's registration.
 */
const pageFlows: readonly {
  paths: (pages: PagePaths) => readonly string[];
  needsMail: boolean;
  register: (pages: FlowPages<PageFlowSettings>) => void;
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
  const factors = served.factors !== false;
  const wanted = (route: { needsMail?: boolean }) => route.needsMail !== true || served.mail;
  return [
    ...servedOperations({ mail: served.mail, factors }).map(
      (operation) => `${accountBasePath}${operation.path}`,
    ),
    ...pageFlows.filter(wanted).flatMap((flow) => flow.paths(pages)),
    ...(served.accountPage ? accountPagePaths(pages, { mail: served.mail, factors }) : []),
    // A path parameter as OpenAPI writes it (`{id}`), not as Fastify does (`:id`).
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
  /** The configured identity providers (src/config/identity-providers.ts); none when absent. */
  identityProviders?: readonly IdentityProviderSetting[] | undefined;
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
  /** The wing's queue for work after an answer (src/account/wing.ts drains it at the stop). */
  afterAnswer: PacedWork;
}

/** What every account action may use, built once from the wing's registration. */
function actionDepsOf(
  site: Site,
  deps: AccountRegistration,
  store: AccountStore,
  guards: Guards,
): AccountDeps {
  const { config } = deps;
  const now = site.now;
  const log = site.app.log;
  return {
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
    mail: deps.mail,
    throttle: deps.throttle,
    mailRequests: createMailRequestLimits(deps.throttleStore, config.mailRequestLimits, now),
    mailTokenTtlSeconds: config.mailTokenTtlSeconds,
    signupOpen: config.signupOpen === true,
    factors: deps.factors,
    sessionLifetime: config.sessionLifetime,
    identityProviders: config.identityProviders ?? [],
    afterAnswer: deps.afterAnswer,
    totp: deps.totp,
    secondStep: deps.secondStep,
    log,
  };
}

/** What a JSON route's handler is handed. */
interface RouteDeps {
  guards: Guards;
  perform: Perform;
  assertCsrf: (request: FastifyRequest, body: Record<string, unknown>) => void;
}

/** One operation's JSON route: CSRF (every POST), then its guard, then its action. */
function routeHandler(operation: AccountOperation, deps: RouteDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // A path's `{id}` is a field as the body's are (and wins over one the body names).
    const body = {
      ...(request.method === 'POST' ? readBody(request) : {}),
      ...(request.params as Record<string, string>),
    };
    if (request.method === 'POST') deps.assertCsrf(request, body);
    let result: ActionResult;
    if (operation.guard === 'none') {
      result = await deps.perform(operation.action, request, reply, body);
    } else {
      const signedIn = await deps.guards.session(request);
      if (operation.guard === 'recent') await deps.guards.recent(signedIn);
      result = await deps.perform(operation.action, request, reply, body, signedIn);
    }
    return reply.code(result.status ?? operation.status ?? 200).send(result.body);
  };
}

/**
 * The JSON routes and the flows' pages, in a scope of their own: bodies kept as bytes (parsed
 * by readBody, so a malformed body is our 400 and not Fastify's), `Cache-Control: no-store`.
 */
function mountRoutes(
  site: Site,
  operations: readonly AccountOperation[],
  flows: typeof pageFlows,
  handed: RouteDeps & { flow: FlowPorts; config: AccountSettings; pages: PagePaths },
): void {
  site.declareRoutes(
    Object.fromEntries(
      operations.map((operation) => [
        `${accountBasePath}${operation.path}`,
        operation.method === 'GET' ? ['GET', 'HEAD'] : ['POST'],
      ]),
    ),
  );
  for (const flow of flows)
    site.declareRoutes(
      Object.fromEntries(flow.paths(handed.pages).map((path) => [path, ['GET', 'HEAD', 'POST']])),
    );
  void site.app.register((scope, _options, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      ['application/x-www-form-urlencoded', 'application/json'],
      { parseAs: 'buffer', bodyLimit: handed.config.bodyLimitBytes },
      (_request, body, parsed) => parsed(null, body),
    );
    // Errors too: an account answer is never stored by a cache.
    scope.addHook('onSend', (_request, reply, payload, next) => {
      reply.header('cache-control', 'no-store');
      next(null, payload);
    });
    for (const operation of operations) {
      const url = `${accountBasePath}${operation.path}`;
      scope.route({ method: operation.method, url, handler: routeHandler(operation, handed) });
    }
    const kit = createPageKit(handed.config);
    for (const flow of flows)
      flow.register({ scope, flow: handed.flow, kit, settings: handed.config });
    done();
  });
}

/**
 * `/api/account/*`: JSON or form bodies, `Cache-Control: no-store`, and before each action
 * the CSRF check (every POST), then the (session) or (recent) guard.
 */
export function registerAccount(site: Site, deps: AccountRegistration): void {
  const { config, mail } = deps;
  keyCodeDigests(config.authSecrets);
  const store = createAccountStore(deps.db);
  const guards = createGuards({
    sessions: deps.sessions,
    users: deps.users,
    store,
    reauthMaxAgeSeconds: config.reauthMaxAgeSeconds,
    now: site.now,
  });
  const actionDeps = actionDepsOf(site, deps, store, guards);
  // Redirects follow the request's origin, as Auth.js's do; mailed links follow the stricter rule.
  const publicOriginOf = (request: FastifyRequest) => originOf(request, config.authUrl);
  const linkOriginOf = createLinkOrigin({
    authUrl: config.authUrl,
    authTrustHost: config.authTrustHost,
    log: site.app.log,
  });
  const perform = createPerform(actionDeps, {
    originOf: linkOriginOf,
    pages: deps.pages,
    sessions: deps.sessions,
  });
  const assertCsrf = createCsrfGuard({
    secrets: config.authSecrets,
    originOf: publicOriginOf,
    secureOf: (request) => isSecure(request, config.authUrl),
  });
  deps.passkeys?.bind({ guards, assertCsrf });
  // Production without SMTP_URL: the mail flows do not exist (the spec's 404).
  const served = { mail: mail !== undefined, factors: deps.totp !== undefined };
  mountRoutes(
    site,
    servedOperations(served),
    pageFlows.filter((flow) => !flow.needsMail || served.mail),
    {
      guards,
      perform,
      assertCsrf,
      flow: { deps: actionDeps, perform },
      config,
      pages: deps.pages,
    },
  );
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
