import type { SignInCheck } from '../auth/signin/authorize.js';

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
