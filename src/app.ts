import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Kysely } from 'kysely';
import { createEventSink } from './account/event-sink.js';
import { createMailRequestLimits } from './account/mail-limits.js';
import { registerAccount, type AccountSettings } from './account/register.js';
import { registeredFactors } from './account/factors.js';
import { createSignInChecks } from './account/signin-checks.js';
import { registerAuth, type AuthRegistration, type AuthSettings } from './auth/register.js';
import type { ThrottleSettings } from './auth/throttle.js';
import { createKyselyThrottleStore } from './auth/throttle-store.js';
import type { Dialect } from './db/open.js';
import { pingDatabase } from './db/ping.js';
import type { Database } from './db/schema.js';
import { registerHealth } from './health/register.js';
import { createSite, type SiteConfig } from './http/site.js';
import type { MailQueue } from './mail/mail-queue.js';
import { noObserver, type Observer } from './observe/observer.js';
import { registerMetrics } from './metrics/register.js';
import { forgotPagePath } from './account/reset/reset-views.js';
import { signupPagePath } from './account/signup/signup-views.js';

export type AppConfig = SiteConfig &
  AuthSettings &
  // Optional: apps built without them (tests) get the defaults.
  Partial<
    Pick<
      AccountSettings,
      'reauthMaxAgeSeconds' | 'passwordMinLength' | 'mailTokenTtlSeconds' | 'signupOpen'
    >
  > & {
    /** REQUIRE_VERIFIED_EMAIL; false when absent. */
    requireVerifiedEmail?: boolean;
    /** The sign-in throttle's numbers (the mail request limits use them too). */
    throttle?: ThrottleSettings;
  };

export interface AppDeps extends Omit<AuthRegistration, 'config' | 'observer'> {
  config: AppConfig;
  db: Kysely<Database>;
  dialect?: Dialect;
  version: string;
  logger: FastifyServerOptions['logger'];
  now?: () => number;
  isDraining?: () => boolean;
  /** Where metrics go (src/metrics/); none by default. */
  observer?: Observer;
  /** The mail outbox (src/mail/); without it the mail flows answer 404. */
  mail?: MailQueue;
}

/** Builds the whole service from its dependencies; never reads the environment, never listens. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const observer = deps.observer ?? noObserver;
  const site = createSite({
    config: deps.config,
    logger: deps.logger,
    now: deps.now ?? (() => Date.now()),
    isDraining: deps.isDraining ?? (() => false),
  });
  registerMetrics(site, observer);
  registerHealth(site, {
    version: deps.version,
    pingDatabase: () => pingDatabase(deps.db, deps.dialect ?? 'sqlite'),
    observer,
  });
  const events = createEventSink({ db: deps.db, users: deps.users, log: site.app.log });
  const throttle = deps.config.throttle;
  const mailRequestLimits = {
    emailMax: throttle?.emailMaxFailures ?? 10,
    ipMax: throttle?.ipMaxFailures ?? 100,
    windowSeconds: throttle?.windowSeconds ?? 900,
  };
  // Timed by the database's clock, as the sign-in throttle's counters are (services.ts).
  const throttleStore = createKyselyThrottleStore(deps.db, deps.dialect ?? 'sqlite');
  const mailTokenTtlSeconds = deps.config.mailTokenTtlSeconds ?? 3600;
  const mailOn = deps.mail?.enabled === true;
  const auth = registerAuth(site, {
    ...deps,
    observer,
    events,
    ...(mailOn && { forgotPasswordUrl: forgotPagePath }),
    ...(mailOn && deps.config.signupOpen === true && { signupUrl: signupPagePath }),
    signInChecks: createSignInChecks(
      {
        requireVerifiedEmail: deps.config.requireVerifiedEmail === true,
        factors: registeredFactors,
      },
      {
        db: deps.db,
        mail: deps.mail,
        mailRequests: createMailRequestLimits(throttleStore, mailRequestLimits, site.now),
        mailTokenTtlSeconds,
        now: site.now,
        log: site.app.log,
      },
    ),
  });
  registerAccount(site, {
    ...deps,
    config: {
      ...deps.config,
      reauthMaxAgeSeconds: deps.config.reauthMaxAgeSeconds ?? 600,
      passwordMinLength: deps.config.passwordMinLength ?? 12,
      mailTokenTtlSeconds,
      mailRequestLimits,
    },
    sessions: auth.sessions,
    pageView: auth.pageView,
    throttleStore,
  });
  return site.app;
}
