import type { Kysely } from 'kysely';
import type { SignInCheck } from '../auth/authorize.js';
import type { Database } from '../db/schema.js';
import { createPasskeyStore } from './passkeys/passkey-store.js';

/** What `GET /api/account` says of a person's second factors (accounts spec). */
export interface SecondFactors {
  totp: boolean;
  passkeys: number;
  recoveryCodes: number;
}

/**
 * A way to prove who you are beyond the password, as a module of its own: what it adds to the
 * account's summary, and its check after the password (sign-in runs the registered factors'
 * checks in order, after the verified-address gate: src/account/signin-checks.ts). Its routes,
 * pages, events and mails live in its own folder beside it.
 */
export interface Factor {
  name: string;
  /** Its part of `secondFactors`, read from the store (never a secret). */
  summary(userId: string): Promise<Partial<SecondFactors>>;
  signInCheck?: SignInCheck;
}

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

/** What a factor reads its state from. */
export interface FactorPorts {
  db: Kysely<Database>;
}

/**
 * The one list of the factors this service offers, in the order sign-in checks them; a new
 * factor is registered here and nowhere else, each from its own folder. Passkeys report their
 * count and check nothing after a password (they sign in on their own).
 */
export function registeredFactors(ports: FactorPorts): readonly Factor[] {
  const passkeys = createPasskeyStore(ports.db);
  return [
    {
      name: 'passkeys',
      summary: async (userId) => ({ passkeys: await passkeys.count(userId) }),
    },
  ];
}
