import type { WayIn } from '../auth/way-in.js';

/** What `GET /api/account` says of a person's second factors (accounts spec). */
export interface SecondFactors {
  totp: boolean;
  passkeys: number;
  recoveryCodes: number;
}

/** A way in's part of `secondFactors`, read from the store (never a secret). */
export interface Factor {
  name: string;
  summary(userId: string): Promise<Partial<SecondFactors>>;
}

/**
 * A way in as the account wing registers it (src/account/ways-in.ts): what the Auth.js wing
 * mounts, and its part of the account's second factors when it is one.
 */
export interface AccountWayIn {
  wayIn: WayIn;
  factor?: Factor;
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
