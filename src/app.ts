import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Kysely } from 'kysely';
import { createAccountWing, type AccountWingSettings } from './account/wing.js';
import { registerAuth, type AuthRegistration, type AuthSettings } from './auth/register.js';
import { createKyselyThrottleStore } from './auth/signin/throttle-store.js';
import type { Config } from './config/index.js';
import { authorizationOrigins } from './config/identity-providers.js';
import { pageDefaults } from './config/page-settings.js';
import type { Dialect } from './db/open.js';
import { pingDatabase } from './db/ping.js';
import type { Database } from './db/schema.js';
import { registerHealth } from './health/register.js';
import { createSite, type SiteConfig } from './http/site.js';
import type { MailQueue } from './mail/mail-queue.js';
import { noObserver, type Observer } from './observe/observer.js';
import { registerMetrics } from './metrics/register.js';
import { tokens as tokenSettings } from './config/tokens.js';
import { databaseKeyRing, fileKeyRing } from './tokens/key-ring.js';
import { registerTokens } from './tokens/register.js';

export type AppConfig = SiteConfig &
  AuthSettings &
  // Optional: apps built without them (tests) get the configuration's defaults.
  Pick<
    AccountWingSettings,
    | 'reauthMaxAgeSeconds'
    | 'passwordMinLength'
    | 'mailTokenTtlSeconds'
    | 'signupOpen'
    | 'emailSignIn'
    | 'requireVerifiedEmail'
    | 'throttle'
    | 'secondFactor'
    | 'env'
    | 'identityProviders'
    | 'identityProviderTimeoutSeconds'
    | 'newDeviceNotice'
  > &
  // Optional: apps built without it (tests) get the configuration's defaults.
  Partial<Pick<Config, 'tokens'>>;

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

const tokenDefaults = tokenSettings.parse({}).tokens;

/** Builds the whole service from its dependencies; never reads the environment, never listens. */
export function buildApp(built: AppDeps): FastifyInstance {
  // The pages' forms may lead to the configured providers' sign-ins (their buttons' posts are
  // answered with a redirect there): their CSP says so (src/pages/page-csp.ts).
  const formTargets = authorizationOrigins(built.config.identityProviders ?? []);
  const page = { ...(built.config.page ?? pageDefaults), formTargets };
  const deps = { ...built, config: { ...built.config, page } };
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
  const wing = createAccountWing({
    ...deps,
    // Timed by the database's clock, as the sign-in throttle's counters are (services.ts).
    throttleStore: createKyselyThrottleStore(deps.db, deps.dialect ?? 'sqlite'),
    now: site.now,
    log: site.app.log,
  });
  const auth = registerAuth(site, {
    ...deps,
    observer,
    ...wing.forAuth,
    // An embedding's own ways in (a test's) are mounted after the registry's.
    waysIn: [...wing.forAuth.waysIn, ...(deps.waysIn ?? [])],
  });
  wing.register(site, auth);
  const tokens = deps.config.tokens ?? tokenDefaults;
  registerTokens(site, {
    config: { authUrl: deps.config.authUrl, tokens, session: deps.config.session },
    db: deps.db,
    ring:
      tokens.signingKeyPem === undefined
        ? databaseKeyRing({
            db: deps.db,
            secrets: deps.config.authSecrets,
            postgres: deps.dialect === 'postgres',
            now: site.now,
          })
        : fileKeyRing(tokens.signingKeyPem),
    sessions: auth.sessions,
    now: site.now,
  });
  return site.app;
}
