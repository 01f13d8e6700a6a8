import type { Kysely } from 'kysely';
import type { AccountEventSink } from '../auth/account-events.js';
import type { SignInCheck } from '../auth/authorize.js';
import type { PageViewOf } from '../auth/routes.js';
import type { SessionAccess } from '../auth/session-access.js';
import type { Throttle, ThrottleSettings } from '../auth/throttle.js';
import type { ThrottleStore } from '../auth/throttle-store.js';
import { accounts } from '../config/accounts.js';
import type { PageSettings } from '../config/page-settings.js';
import { signIn } from '../config/sign-in.js';
import type { Database } from '../db/schema.js';
import type { Site } from '../http/site.js';
import type { MailQueue } from '../mail/mail-queue.js';
import type { PasswordHasher } from '../users/hasher.js';
import type { UserStore } from '../users/store.js';
import { createEventSink } from './event-sink.js';
import { registeredFactors } from './factors.js';
import { createMailRequestLimits } from './mail-limits.js';
import { eventsListDays, pruneEvents } from './model/events.js';
import { pruneTokens } from './model/secrets.js';
import { pagePaths } from './paths.js';
import { registerAccount } from './register.js';
import { createSignInChecks } from './signin-checks.js';
import { createPasskeys } from './passkeys/passkeys.js';
import { createPasskeyStore } from './passkeys/passkey-store.js';
import type { PasskeyPort } from '../auth/passkey-port.js';

/*
 * The account wing's one front door: app.ts, main.ts and the CLI reach the wing through this
 * file and src/operator/, never through its folders. What the auth wing takes from it (its
 * checks after the password, its event sink, the links its sign-in page shows), its routes,
 * and the prune of what it keeps.
 */

// The configuration's own defaults (src/config/), for an app built without them (tests).
const accountDefaults = accounts.parse({});
const signInDefaults = signIn.parse({});

export interface AccountWingSettings {
  authSecrets: readonly string[];
  authUrl: string | undefined;
  bodyLimitBytes: number;
  page?: PageSettings | undefined;
  reauthMaxAgeSeconds?: number | undefined;
  passwordMinLength?: number | undefined;
  mailTokenTtlSeconds?: number | undefined;
  signupOpen?: boolean | undefined;
  requireVerifiedEmail?: boolean | undefined;
  /** The sign-in throttle's numbers, which mail requests are limited by too. */
  throttle?: ThrottleSettings | undefined;
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
  log: { error(fields: object, message: string): void };
}

/** What the auth wing takes from the account wing. */
export interface ForAuth {
  events: AccountEventSink;
  signInChecks: SignInCheck[];
  /** Where "Forgot your password?" leads, when mail is on. */
  forgotPasswordUrl?: string;
  /** Where "Create an account" leads, when sign-up is open and mail is on. */
  signupUrl?: string;
  /** Passkeys: Auth.js's Passkey provider's routes and the assertion check. */
  passkeys: PasskeyPort;
}

export function createAccountWing(deps: AccountWingDeps) {
  const { config } = deps;
  // Whether mail is on is decided here, once: the flows, the links and the checks follow it.
  const mail = deps.mail?.enabled === true ? deps.mail : undefined;
  const throttle = config.throttle ?? signInDefaults.throttle;
  const mailRequestLimits = {
    emailMax: throttle.emailMaxFailures,
    ipMax: throttle.ipMaxFailures,
    windowSeconds: throttle.windowSeconds,
  };
  const mailTokenTtlSeconds = config.mailTokenTtlSeconds ?? accountDefaults.mailTokenTtlSeconds;
  const signupOpen = config.signupOpen ?? accountDefaults.signupOpen;
  const factors = registeredFactors({ db: deps.db });
  const passkeys = createPasskeys({
    db: deps.db,
    users: deps.users,
    throttle: deps.throttle,
    secrets: config.authSecrets,
    authUrl: config.authUrl,
    mail,
    factors,
    now: deps.now,
    log: deps.log,
  });
  const forAuth: ForAuth = {
    events: createEventSink({ db: deps.db, users: deps.users, log: deps.log }),
    signInChecks: createSignInChecks(
      {
        requireVerifiedEmail: config.requireVerifiedEmail ?? accountDefaults.requireVerifiedEmail,
        factors,
      },
      {
        db: deps.db,
        mail,
        mailRequests: createMailRequestLimits(deps.throttleStore, mailRequestLimits, deps.now),
        mailTokenTtlSeconds,
        now: deps.now,
        log: deps.log,
      },
    ),
    passkeys: passkeys.port,
    ...(mail !== undefined && { forgotPasswordUrl: pagePaths.forgot }),
    ...(mail !== undefined && signupOpen && { signupUrl: pagePaths.signup }),
  };
  return {
    forAuth,
    /** The routes and pages, on the auth wing's session read and page CSRF. */
    register(site: Site, auth: { sessions: SessionAccess; pageView?: PageViewOf | undefined }) {
      registerAccount(site, {
        ...deps,
        mail,
        config: {
          ...config,
          reauthMaxAgeSeconds: config.reauthMaxAgeSeconds ?? accountDefaults.reauthMaxAgeSeconds,
          passwordMinLength: config.passwordMinLength ?? signInDefaults.passwordMinLength,
          mailTokenTtlSeconds,
          signupOpen,
          mailRequestLimits,
        },
        sessions: auth.sessions,
        factors,
        passkeys,
        ...(auth.pageView !== undefined && { pageView: auth.pageView }),
      });
    },
  };
}

/**
 * The periodic prune of what the wing keeps: events past the list's reach, spent secrets,
 * answered passkey challenges past their expiry.
 */
export async function pruneAccountRecords(db: Kysely<Database>, now: number): Promise<void> {
  await Promise.all([
    pruneEvents(db, now - eventsListDays * 86_400_000),
    pruneTokens(db, now - 86_400_000),
    createPasskeyStore(db).prune(now),
  ]);
}
