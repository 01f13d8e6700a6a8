import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Factor, SecondFactors } from './factor.js';
import { createPasskeyStore } from './passkeys/passkey-store.js';
import type { SecondStep } from './totp/second-step.js';
import { createTotpFactor } from './totp/totp-factor.js';

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
 * factor is registered here and nowhere else, each from its own folder. TOTP (with its recovery
 * codes) is the one second factor of a password sign-in; passkeys report their count and check
 * nothing after a password (they are a way to sign in of their own).
 */
export function registeredFactors(ports: FactorPorts): readonly Factor[] {
  const passkeys = createPasskeyStore(ports.db);
  return [
    createTotpFactor(ports),
    {
      name: 'passkeys',
      summary: async (userId) => ({ passkeys: await passkeys.count(userId) }),
    },
  ];
}
