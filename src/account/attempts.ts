import {
  attempt as attemptOnce,
  type Admitted,
  type Checked,
} from '../auth/signin/password-proof.js';
import type { Throttle } from '../auth/signin/throttle.js';
import { HttpError } from '../http/errors.js';

/*
 * Every check of a secret the account wing makes (a password, a mailed code, a link) goes
 * through the sign-in throttle's protocol (accounts spec, Conventions): charged before it is
 * checked, so parallel guesses cannot overrun a limit; a right one takes its failure charges
 * back; one never checked (load shed, a store failure) is refunded whole; a wrong one stays
 * charged. Written here once, so no flow drives admit / succeeded / notChecked by hand.
 */

/** 429 `rate_limited` with its Retry-After. */
export const rateLimited = (seconds: number) =>
  new HttpError('rate_limited', { 'retry-after': String(seconds) });

export type { Admitted };

/** Who an attempt is charged to. */
export interface AttemptScope {
  /** The normalised address the secret belongs to. */
  email: string;
  ip: string;
  /** A client that proved an earlier sign-in: the per-address limits do not refuse it. */
  knownDevice?: boolean;
  /** An admission the request already made, used instead of charging again. */
  admitted?: Admitted | undefined;
}

/** What the check found: a right secret (its value), or a wrong one. */
export type { Checked };

export const right = <T>(value: T): Checked<T> => ({ right: true, value });
export const wrong: Checked<never> = { right: false, seen: undefined };

/**
 * One attempt (src/auth/signin/password-proof.ts's, the sign-in's own): 429 past a limit, nothing
 * checked; a right answer returns its value, a wrong one null (it stays charged); a throw was
 * never checked and is refunded.
 */
export async function attempt<T>(
  throttle: Throttle,
  now: number,
  scope: AttemptScope,
  check: (admitted: Admitted) => Promise<Checked<T>>,
): Promise<T | null> {
  const ports = { throttle, now: () => now };
  const result = await attemptOnce(
    ports,
    { ...scope, knownDevice: scope.knownDevice ?? false },
    check,
  );
  if ('throttled' in result) throw rateLimited(result.retryAfterSeconds);
  return result.right ? result.value : null;
}

/**
 * A secret refused before or without its check (unknown, used, expired, malformed): charged as
 * a failed attempt to the client's address (and to `email` when the secret named one), never
 * taken back. 429 once a limit is reached, else 400 `invalid_token`; `detail` words the
 * refusal when the secret was valid but cannot be used (the catalogue's message otherwise).
 */
export async function refuseSecret(
  throttle: Throttle,
  now: number,
  client: { ip: string; email?: string | null; knownDevice?: boolean },
  detail?: string,
): Promise<never> {
  const retryAfter = await throttle.refused(
    client.email ?? null,
    client.ip,
    now,
    client.knownDevice ?? false,
  );
  if (retryAfter !== null) throw rateLimited(retryAfter);
  throw new HttpError('invalid_token', {}, detail);
}
