import type { Kysely } from 'kysely';
import type { WayIn } from '../auth/way-in.js';
import type { SignInChallenges } from '../challenge/challenges.js';
import type { Database } from '../db/schema.js';
import type { MailQueue } from '../mail/mail-queue.js';
import type { AccountWayIn, Factor } from './factors.js';
import type { MailRequestLimiter } from './mail-limits.js';
import type { PagePaths } from './paths.js';
import { passkeysWayIn } from './passkeys/passkey-way-in.js';
import type { Passkeys } from './passkeys/passkeys.js';
import type { SecondStep } from './totp/second-step.js';
import type { SecretBox } from './totp/secret-box.js';
import type { TotpPorts } from './totp/factor-ports.js';
import { signInEnrolmentWayIn } from './totp/signin-enrolment.js';
import { createTotpWayIn } from './totp/totp-factor.js';
import { createVerifiedAddressCheck } from './verified-address-check.js';

/** What every way in is built over (the account wing's); each takes the part it needs. */
export interface WayInPorts {
  db: Kysely<Database>;
  /** The outbox, when mail is on; else undefined. */
  mail: MailQueue | undefined;
  mailRequests: MailRequestLimiter;
  mailTokenTtlSeconds: number;
  /** Where the pages live (ACCOUNT_PAGES_PATH). */
  pages: PagePaths;
  /** REQUIRE_VERIFIED_EMAIL. */
  requireVerifiedEmail: boolean;
  /** The sign-in challenge (src/challenge/). */
  challenges: SignInChallenges;
  /** TOTP's machinery, shared with the account routes (src/account/totp/factor-ports.ts). */
  box: SecretBox;
  secondStep: SecondStep;
  totp: TotpPorts | undefined;
  /** Passkeys, shared with the account routes (src/account/passkeys/passkeys.ts). */
  passkeys: Passkeys;
  /** Every registered way in's part of the second factors: filled once all are built. */
  factors: readonly Factor[];
  now: () => number;
  log: {
    info(fields: object, message: string): void;
    error(fields: object, message: string): void;
  };
}

/** The password: its own check is the Auth.js wing's; REQUIRE_VERIFIED_EMAIL's gate follows it. */
function passwordWayIn(ports: WayInPorts): AccountWayIn {
  return {
    wayIn: {
      id: 'password',
      signInChecks: ports.requireVerifiedEmail ? [createVerifiedAddressCheck(ports)] : [],
    },
  };
}

/**
 * The one list of the ways in, in the order sign-in runs their checks after the password (the
 * verified-address gate, each second factor, enrolment last). A new way in is its folder and
 * one line here; the Auth.js wing mounts what is listed (src/auth/way-in.ts).
 */
const registry: readonly ((ports: WayInPorts) => AccountWayIn)[] = [
  passwordWayIn,
  createTotpWayIn,
  passkeysWayIn,
  signInEnrolmentWayIn,
];

/**
 * The registered ways in, built; `factors` is filled with their parts of the second factors
 * (a way in asks the others' only when a request comes, once all are built).
 */
export function registeredWaysIn(
  ports: Omit<WayInPorts, 'factors'>,
  factors: Factor[],
): { waysIn: WayIn[]; factors: readonly Factor[] } {
  const built = registry.map((build) => build({ ...ports, factors }));
  factors.push(...built.flatMap((one) => (one.factor === undefined ? [] : [one.factor])));
  return { waysIn: built.map((one) => one.wayIn), factors };
}
