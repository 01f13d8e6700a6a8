import type { Kysely } from 'kysely';
import type { WayIn } from '../auth/way-in.js';
import type { SignInChallenges } from '../challenge/challenges.js';
import type { Database } from '../db/schema.js';
import type { MailQueue } from '../mail/mail-queue.js';
import type { UserStore } from '../users/store.js';
import type { AccountOperation } from './action.js';
import type { AccountWayIn, Factor } from './second-factors.js';
import type { MailRequestLimiter } from './mail-limits.js';
import type { PagePaths } from './paths.js';
import {
  createEmailSignInWayIn,
  type EmailSignInPorts,
} from './email-signin/email-signin-way-in.js';
import { emailSignInMails } from './email-signin/mails.js';
import { identityOperations } from './identities/actions.js';
import { createIdentityWayIn, type IdentityWayInPorts } from './identities/identity-way-in.js';
import { identityUpkeep } from './identities/upkeep.js';
import { passkeyOperations } from './passkeys/actions.js';
import { passkeysWayIn } from './passkeys/passkey-way-in.js';
import { passkeyUpkeep } from './passkeys/upkeep.js';
import type { MethodUpkeep } from './model/method-upkeep.js';
import type { Passkeys } from './passkeys/passkeys.js';
import type { SecondStep } from './totp/second-step.js';
import type { SecretBox } from './totp/secret-box.js';
import type { TotpPorts } from './totp/factor-ports.js';
import { signInEnrolmentWayIn } from './totp/signin-enrolment.js';
import { totpOperations } from './totp/page-actions.js';
import { createTotpWayIn } from './totp/totp-factor.js';
import { totpUpkeep } from './totp/upkeep.js';
import { createVerifiedAddressCheck } from './verified-address-check.js';

/** What every way in is built over (the account wing's); each takes the part it needs. */
export interface WayInPorts
  extends
    Omit<IdentityWayInPorts, 'pages' | 'mail' | 'log'>,
    Omit<EmailSignInPorts, 'mail' | 'log'> {
  db: Kysely<Database>;
  users: Pick<UserStore, 'findById' | 'findByEmail'>;
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
    warn(fields: object, message: string): void;
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

/** A way in as the registry lists it: how it is built, and what it adds to the account at rest. */
interface RegisteredWayIn {
  /** Built over the wing's ports: what the Auth.js wing mounts, its part of `secondFactors`. */
  build(ports: WayInPorts): AccountWayIn;
  /** Its rows of the account's operations (src/account/account-operations.ts). */
  operations?: readonly AccountOperation[];
  /** Its mails and their words, what an operator's reset removes, its prune. */
  upkeep?: MethodUpkeep;
}

/**
 * The one list of the ways in, in the order sign-in runs their checks after the password (the
 * verified-address gate, each second factor, enrolment last). A new way in is its folder and
 * one line here; the Auth.js wing mounts what is listed (src/auth/way-in.ts), the account's
 * table serves its operations, and the service, the CLI and the operator's reset take its
 * upkeep (src/account/upkeep-registry.ts).
 */
const registry: readonly RegisteredWayIn[] = [
  { build: passwordWayIn },
  { build: createIdentityWayIn, operations: identityOperations, upkeep: identityUpkeep },
  { build: createEmailSignInWayIn, upkeep: { id: 'email', mails: emailSignInMails } },
  { build: createTotpWayIn, operations: totpOperations, upkeep: totpUpkeep },
  { build: passkeysWayIn, operations: passkeyOperations, upkeep: passkeyUpkeep },
  { build: signInEnrolmentWayIn },
];

/** Every registered way in's rows of the account's operations, in registry order. */
export const waysInOperations: readonly AccountOperation[] = registry.flatMap(
  (wayIn) => wayIn.operations ?? [],
);

/** Every registered way in's upkeep, in registry order. */
export const waysInUpkeep: readonly MethodUpkeep[] = registry.flatMap((wayIn) =>
  wayIn.upkeep === undefined ? [] : [wayIn.upkeep],
);

/**
 * The registered ways in, built; `factors` is filled with their parts of the second factors
 * (a way in asks the others' only when a request comes, once all are built).
 */
export function registeredWaysIn(
  ports: Omit<WayInPorts, 'factors'>,
  factors: Factor[],
): { waysIn: WayIn[]; factors: readonly Factor[] } {
  const built = registry.map((wayIn) => wayIn.build({ ...ports, factors }));
  factors.push(...built.flatMap((one) => (one.factor === undefined ? [] : [one.factor])));
  return { waysIn: built.map((one) => one.wayIn), factors };
}
