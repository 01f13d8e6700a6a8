import type { FastifyReply, FastifyRequest } from 'fastify';

/*
 * What the passkeys' way in (./way-in.ts) mounts of them. `/api/auth/webauthn-options/passkey`
 * and `/api/auth/callback/passkey` are Auth.js's Passkey provider's routes, served with its wire
 * protocol; an assertion signs in through the same Auth.js credentials callback as a password,
 * so the session, its cookie and the answer are the password sign-in's own.
 */

/** What an assertion proved, or why it did not sign anyone in. */
export type PasskeyVerdict =
  | {
      outcome: 'right';
      user: { id: string; email: string; name: string; credentialVersion: number };
      /** What the session records (`passkey`, plus `user_verification` with UV). */
      proofs: string[];
    }
  /** A right assertion that may not sign in alone (no UV, and the account has a factor). */
  | { outcome: 'refused'; code: string; userId: string; credentialVersion: number }
  /** Unknown or removed credential, bad signature or counter, used or missing challenge. */
  | { outcome: 'wrong'; reason: string; userId?: string }
  | { outcome: 'throttled'; retryAfterSeconds: number };

export interface PasskeyAssertion {
  /** The client's `data` field: the browser's answer as JSON. */
  data: unknown;
  /** The challenge cookie's value, as the request carried it. */
  challengeCookie: string | undefined;
  origin: string;
  secure: boolean;
  ip: string;
}

export interface PasskeyPort {
  /** `GET /api/auth/webauthn-options/passkey`. */
  options(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  /** `POST /api/auth/callback/passkey` with `action=register` (a signed-in, recent session). */
  register(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  /** Checks an assertion (`action=authenticate`) inside Auth.js's callback. */
  assert(assertion: PasskeyAssertion): Promise<PasskeyVerdict>;
}
