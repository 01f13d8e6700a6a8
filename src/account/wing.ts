import type { Kysely } from 'kysely';
import type { IdentityProviderSetting } from '../config/identity-providers.js';
import { pruneAuditLog } from '../audit/prune.js';
import type { AccountEventSink } from '../auth/request/account-events.js';
import type { PageViewOf } from '../auth/bridge/routes.js';
import type { SessionAccess } from '../auth/session/session-access.js';
import type { Throttle, ThrottleSettings } from '../auth/signin/throttle.js';
import type { ThrottleStore } from '../auth/signin/throttle-store.js';
import type { WayIn } from '../auth/way-in.js';
import { createSignInChallenges, type SignInChallenges } from '../challenge/challenges.js';
import { pruneChallenges } from '../challenge/challenge-store.js';
import { accounts } from '../config/accounts.js';
import type { PageSettings } from '../config/page-settings.js';
import { session as sessionSettings } from '../config/session.js';
import { signIn } from '../config/sign-in.js';
import type { Database } from '../db/schema.js';
import type { Site } from '../http/site.js';
import type { MailQueue } from '../mail/mail-queue.js';
import type { PasswordHasher } from '../users/hasher.js';
import type { UserStore } from '../users/store.js';
import { createEventSink } from './event-sink.js';
import { placeKeptMs, prunePlaces } from './new-device/places.js';
import { createSignInRecord } from './new-device/sign-in-record.js';
import type { SecondFactorMode } from '../config/second-factor.js';
import type { Factor } from './second-factors.js';
import { createTotpPorts } from './totp/factor-ports.js';
import { pageDefaults } from '../config/page-settings.js';
import { createMailRequestLimits } from './mail-limits.js';
import { createPacedWork, type PacedWork } from './paced-work.js';
import { eventsListDays, pruneEvents } from './model/events.js';
import { pruneTokens } from './model/secrets.js';
import { pagePathsUnder } from './paths.js';
import { registerAccount } from './register.js';
import { createPasskeys } from './passkeys/passkeys.js';
import { registeredWaysIn } from './ways-in.js';
import { pruneRegisteredMethods } from './upkeep-registry.js';

export { countEventsWith } from './model/events.js';

/*
 * The account wing's one front door: app.ts, main.ts and the CLI reach the wing through this
 * file and src/operator/, never through its folders. What the auth wing takes from it (its
 * checks after the password, its event sink, the links its sign-in page shows), its routes,
 * and the prune of what it keeps.
 */

/**
 * The after-answer queue's clock: a forgot's mail is queued at most this much later, and a
 * request meets that work only when it arrives during a tick, whatever the address was.
 */
const afterAnswerTickMs = 250;

// The configuration's own defaults (src/config/), for an app built without them (tests).
const accountDefaults = accounts.parse({});
const signInDefaults = signIn.parse({});
const sessionDefaults = sessionSettings.parse({}).session;

export interface AccountWingSettings {
  authSecrets: readonly string[];
  authUrl: string | undefined;
  /** AUTH_TRUST_HOST: without AUTH_URL, mailed links may follow the Host header. */
  authTrustHost?: boolean | undefined;
  bodyLimitBytes: number;
  page?: PageSettings | undefined;
  reauthMaxAgeSeconds?: number | undefined;
  passwordMinLength?: number | undefined;
  mailTokenTtlSeconds?: number | undefined;
  signupOpen?: boolean | undefined;
  /** EMAIL_SIGNIN=on: a mailed link or code signs in (src/account/email-signin/). */
  emailSignIn?: boolean | undefined;
  requireVerifiedEmail?: boolean | undefined;
  /** The sign-in throttle's numbers, which mail requests are limited by too. */
  throttle?: ThrottleSettings | undefined;
  /** SESSION_MAX_AGE and SESSION_ABSOLUTE_MAX_AGE (the auth wing's), for the sessions list. */
  session?: { maxAgeSeconds: number; absoluteMaxAgeSeconds: number } | undefined;
  /**
   * SECOND_FACTOR and FACTOR_KEY (src/config/second-factor.ts). Absent (tests): optional, with a key
   * derived from the auth secret, as in development.
   */
  secondFactor?: { mode: SecondFactorMode; keys: readonly string[] } | undefined;
  /** NODE_ENV: only outside production may a factor key be derived from the auth secret. */
  env?: string | undefined;
  /** The identity providers people may sign in with (src/config/identity-providers.ts). */
  identityProviders?: readonly IdentityProviderSetting[] | undefined;
  /** IDENTITY_PROVIDER_TIMEOUT: how long a provider has to answer each call. */
  identityProviderTimeoutSeconds?: number | undefined;
  /** NEW_DEVICE_NOTICE: a sign-in from a new device and network is recorded and mailed. */
  newDeviceNotice?: boolean | undefined;
}

export interface AccountWingDeps {
  config: AccountWingSettings;
  db: Kysely<Database>;
  users: UserStore;
  throttle: Throttle;
  hasher: PasswordHasher;
  /** The throttle table's store, for the mail request limits' counters. */
  throttleStore: ThrottleStore;
  /** The mail outbox; without it (or not `enabled`) the mail flows answer 404. */
  mail?: MailQueue | undefined;
  now: () => number;
  log: {
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
    error(fields: object, message: string): void;
  };
}

/** What the auth wing takes from the account wing. */
export interface ForAuth {
  events: AccountEventSink;
  /** The registered ways in (src/account/ways-in.ts), for the Auth.js wing to mount. */
  waysIn: WayIn[];
  signInChallenges: SignInChallenges;
  /** Where "Forgot your password?" leads, when mail is on. */
  forgotPasswordUrl?: string;
  /** Where "Create an account" leads, when sign-up is open and mail is on. */
  signupUrl?: string;
}

/** The wing's settings with the configuration's defaults filled in. */
function settled(config: AccountWingSettings) {
  const throttle = config.throttle ?? signInDefaults.throttle;
  return {
    throttle,
    mailRequestLimits: {
      emailMax: throttle.emailMaxFailures,
      ipMax: throttle.ipMaxFailures,
      windowSeconds: throttle.windowSeconds,
    },
    mailTokenTtlSeconds: config.mailTokenTtlSeconds ?? accountDefaults.mailTokenTtlSeconds,
    signupOpen: config.signupOpen ?? accountDefaults.signupOpen,
    // ACCOUNT_PAGES_PATH: every page, form and mailed link of the wing follows it.
    pages: pagePathsUnder(config.page?.accountPagesPath),
  };
}

/** The ways in with what they share with the account routes (TOTP's machinery, passkeys). */
function buildWaysIn(deps: AccountWingDeps, mail: MailQueue | undefined, afterAnswer: PacedWork) {
  const { config } = deps;
  const { mailRequestLimits, mailTokenTtlSeconds, pages } = settled(config);
  const { secondStep, box, totp } = createTotpPorts({
    db: deps.db,
    throttle: deps.throttle,
    secondFactor: config.secondFactor ?? { mode: 'optional', keys: [] },
    // Development without FACTOR_KEY: a key of its own derived from the auth secret. Production
    // never derives one (config refuses factors on without FACTOR_KEY there).
    derivedKeyFrom: config.env === 'production' ? undefined : config.authSecrets[0],
    issuer: config.page?.productName ?? pageDefaults.productName,
    mail,
    pages,
    now: deps.now,
    log: deps.log,
  });
  // Filled by the registry once every way in is built.
  const factors: Factor[] = [];
  const passkeys = createPasskeys({
    db: deps.db,
    users: deps.users,
    throttle: deps.throttle,
    secrets: config.authSecrets,
    authUrl: config.authUrl,
    pages,
    mail,
    factors,
    secondFactorRequired: totp?.mode === 'required',
    now: deps.now,
    log: deps.log,
  });
  const challenges = createSignInChallenges({ db: deps.db, users: deps.users, now: deps.now });
  const built = registeredWaysIn(
    {
      db: deps.db,
      mail,
      mailRequests: createMailRequestLimits(deps.throttleStore, mailRequestLimits, deps.now),
      mailTokenTtlSeconds,
      pages,
      requireVerifiedEmail: config.requireVerifiedEmail ?? accountDefaults.requireVerifiedEmail,
      challenges,
      box,
      secondStep,
      totp,
      passkeys,
      users: deps.users,
      throttle: deps.throttle,
      emailSignIn: config.emailSignIn ?? accountDefaults.emailSignIn,
      authSecrets: config.authSecrets,
      pageSettings: config.page,
      afterAnswer,
      identityProviders: config.identityProviders ?? [],
      identityProviderTimeoutSeconds: config.identityProviderTimeoutSeconds ?? 10,
      signupOpen: settled(config).signupOpen,
      reauthMaxAgeSeconds: config.reauthMaxAgeSeconds ?? accountDefaults.reauthMaxAgeSeconds,
      publicOrigin: config.authUrl,
      now: deps.now,
      log: deps.log,
    },
    factors,
  );
  return { ...built, challenges, secondStep, totp, passkeys };
}

export function createAccountWing(deps: AccountWingDeps) {
  const { config } = deps;
  // Whether mail is on is decided here, once: the flows, the links and the checks follow it.
  const mail = deps.mail?.enabled === true ? deps.mail : undefined;
  const { throttle, mailRequestLimits, mailTokenTtlSeconds, signupOpen, pages } = settled(config);
  // Work after an answer (a mail's lookup and secret), on a clock of its own: the account
  // routes' and the ways in's (src/account/paced-work.ts). The service's stop runs what is left.
  const afterAnswer = createPacedWork({
    tickMs: afterAnswerTickMs,
    maxQueued: 10_000,
    log: deps.log,
  });
  const built = buildWaysIn(deps, mail, afterAnswer);
  const { waysIn, factors, challenges, secondStep, totp, passkeys } = built;
  const forAuth: ForAuth = {
    events: createEventSink({
      db: deps.db,
      users: deps.users,
      throttleStore: deps.throttleStore,
      refusalWindowSeconds: throttle.windowSeconds,
      signIns: createSignInRecord({
        db: deps.db,
        notice: config.newDeviceNotice ?? accountDefaults.newDeviceNotice,
        mail,
        pages,
        // At the sign-in throttle's numbers, as every mail budget (src/account/mail-limits.ts).
        budget: { max: mailRequestLimits.emailMax, windowSeconds: throttle.windowSeconds },
        now: deps.now,
        log: deps.log,
      }),
      now: deps.now,
      log: deps.log,
    }),
    waysIn,
    signInChallenges: challenges,
    ...(mail !== undefined && { forgotPasswordUrl: pages.forgot }),
    ...(mail !== undefined && signupOpen && { signupUrl: pages.signup }),
  };
  return {
    forAuth,
    /** The routes and pages, on the auth wing's session read and page CSRF. */
    register(site: Site, auth: { sessions: SessionAccess; pageView?: PageViewOf | undefined }) {
      site.app.addHook('onClose', () => afterAnswer.drain());
      registerAccount(site, {
        ...deps,
        afterAnswer,
        mail,
        pages,
        config: {
          ...config,
          reauthMaxAgeSeconds: config.reauthMaxAgeSeconds ?? accountDefaults.reauthMaxAgeSeconds,
          passwordMinLength: config.passwordMinLength ?? signInDefaults.passwordMinLength,
          mailTokenTtlSeconds,
          signupOpen,
          mailRequestLimits,
          sessionLifetime: config.session ?? sessionDefaults,
          identityProviders: config.identityProviders,
        },
        sessions: auth.sessions,
        factors,
        totp,
        secondStep,
        passkeys,
        ...(auth.pageView !== undefined && { pageView: auth.pageView }),
      });
    },
  };
}

/**
 * The periodic prune of what the wing keeps: events past the list's reach, spent secrets, audit
 * entries past `auditRetentionDays` (behind the chain's checkpoint), spent second-step and
 * passkey challenges, devices and networks not signed in from for a year.
 */
export async function pruneAccountRecords(
  db: Kysely<Database>,
  now: number,
  auditRetentionDays: number = accountDefaults.auditRetentionDays,
): Promise<void> {
  await Promise.all([
    pruneEvents(db, now - eventsListDays * 86_400_000),
    pruneTokens(db, now - 86_400_000),
    pruneAuditLog(db, now - auditRetentionDays * 86_400_000),
    pruneChallenges(db, now),
    pruneRegisteredMethods(db, now),
    prunePlaces(db, now - placeKeptMs),
  ]);
}
