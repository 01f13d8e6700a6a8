import type { Factor, SecondFactors } from './factor.js';
import type { SecondStep } from './totp/second-step.js';
import { createTotpFactor } from './totp/totp-factor.js';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export type { Factor, SecondFactors } from './factor.js';

/** Nothing enrolled: the spec's shape with every factor off. */
export const noSecondFactors: SecondFactors = { totp: false, passkeys: 0, recoveryCodes: 0 };

/** The account's second factors as the registered factors report them. */
export async function secondFactorsOf(
  factors: readonly Factor[],
  userId: string,
): Promise<SecondFactors> {
  const parts = await Promise.all(factors.map((factor) => factor.summary(userId)));
  return Object.assign({ ...noSecondFactors }, ...parts) as SecondFactors;
}

/** What the factors are built over. */
export interface FactorPorts {
  db: Kysely<Database>;
  /** The one check of a TOTP code or recovery code (src/account/totp/second-step.ts). */
  secondStep: SecondStep;
}

/**
 * The one list of the factors this service offers, in the order sign-in checks them; a new
 * factor is registered here and nowhere else. TOTP (with its recovery codes) is the one second
 * factor of a password sign-in; a passkey is a way to sign in of its own.
 */
export const registeredFactors = (ports: FactorPorts): readonly Factor[] => [
  createTotpFactor(ports),
];
