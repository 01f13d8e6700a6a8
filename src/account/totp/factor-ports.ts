import type { Kysely } from 'kysely';
import type { SecondFactorMode } from '../../config/second-factor.js';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { Throttle } from '../../auth/signin/throttle.js';
import { factorLockPolicy, type FactorAttemptPorts } from '../model/factor-throttle.js';
import { createFactorThrottleStore } from '../model/factor-throttle-store.js';
import type { PagePaths } from '../paths.js';
import { createSecondStep, type SecondStep } from './second-step.js';
import { createSecretBox, type SecretBox } from './secret-box.js';

/** What the TOTP routes use beyond every action's deps; absent when SECOND_FACTOR=off. */
export interface TotpPorts {
  mode: Exclude<SecondFactorMode, 'off'>;
  box: SecretBox;
  secondStep: SecondStep;
  /** The issuer an authenticator app shows beside the account (PAGE_PRODUCT_NAME). */
  issuer: string;
}

export interface TotpPortDeps {
  db: Kysely<Database>;
  throttle: Throttle;
  /** SECOND_FACTOR and FACTOR_KEY (src/config/second-factor.ts). */
  secondFactor: { mode: SecondFactorMode; keys: readonly string[] };
  /** Outside production without FACTOR_KEY, the key a development box derives its own from. */
  derivedKeyFrom: string | undefined;
  issuer: string;
  mail: MailQueue | undefined;
  pages: PagePaths;
  now: () => number;
  log: { error(fields: object, message: string): void };
}

/**
 * TOTP's machinery, shared by its way in, enrolment at sign-in and the account routes: the
 * sealed-secret box, the one check of a code (its own throttle beside the password's), and the
 * routes' ports (undefined when SECOND_FACTOR=off or no key can open the box).
 */
export function createTotpPorts(deps: TotpPortDeps): {
  box: SecretBox;
  secondStep: SecondStep;
  totp: TotpPorts | undefined;
} {
  const box = createSecretBox(deps.secondFactor.keys, deps.derivedKeyFrom);
  // Guesses at a second factor's secret: the account's own count, apart from the password's.
  const attempts: FactorAttemptPorts = {
    throttle: deps.throttle,
    store: createFactorThrottleStore(deps.db),
    policy: factorLockPolicy({
      maxFailures: deps.throttle.settings.emailMaxFailures,
      lockSeconds: deps.throttle.settings.lockSeconds,
    }),
    now: deps.now,
    log: deps.log,
  };
  const secondStep = createSecondStep({
    db: deps.db,
    box,
    attempts,
    now: deps.now,
    mail: deps.mail,
    pages: deps.pages,
    log: deps.log,
  });
  const mode = deps.secondFactor.mode;
  const totp =
    mode === 'off' || !box.usable ? undefined : { mode, box, secondStep, issuer: deps.issuer };
  return { box, secondStep, totp };
}
