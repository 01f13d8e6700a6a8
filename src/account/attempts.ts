import type { Admission, Throttle } from '../auth/throttle.js';
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

export type Admitted = Extract<Admission, { admitted: true }>;

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
export type Checked<T> = { right: true; value: T } | { right: false };

export const right = <T>(value: T): Checked<T> => ({ right: true, value });
export const wrong: Checked<never> = { right: false };

/**
 * One attempt: admitted (429 past a limit, nothing checked), then `check`. A right answer takes
 * the failure charges back and returns its value; a wrong one stays charged and returns null;
 * a throw means it was never checked, so the charge is refunded and the error goes on.
 */
export async function attempt<T>(
  throttle: Throttle,
  now: number,
  scope: AttemptScope,
  check: (admitted: Admitted) => Promise<Checked<T>>,
): Promise<T | null> {
  const admission =
    scope.admitted ??
    (await throttle.admit(scope.email, scope.ip, now, scope.knownDevice ?? false));
  if (!admission.admitted) throw rateLimited(admission.retryAfterSeconds);
  let checked: Checked<T>;
  try {
    checked = await check(admission);
  } catch (error) {
    await throttle.notChecked(admission.keys);
    throw error;
  }
  if (!checked.right) return null;
  await throttle.succeeded(admission.keys, admission.pastEmailLock);
  return checked.value;
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
