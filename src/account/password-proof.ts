import type { Throttle } from '../auth/throttle.js';
import { HttpError } from '../http/errors.js';
import { GateFullError } from '../traffic/work-gate.js';
import type { PasswordHasher } from '../users/hasher.js';
import { readPassword } from '../users/password.js';
import type { User } from '../users/store.js';

export interface PasswordProofDeps {
  throttle: Throttle;
  hasher: PasswordHasher;
  now: () => number;
}

/** Why a password proof failed, for the account's record. */
export type ProofFailure = 'wrong_password' | 'throttled';

/**
 * The signed-in user's password, checked as sign-in checks one: charged first against the same
 * per-account and per-address throttles (429 `rate_limited` with Retry-After when a limit is
 * reached, nothing hashed), one argon2 verification off the event loop, a success taking its
 * failure charges back. A wrong (or unreadable) password is 403 `invalid_credentials`.
 * `onFailure` is told before the error is thrown (the account's record).
 */
export function createPasswordProof(deps: PasswordProofDeps) {
  return async function provePassword(
    user: User,
    typed: string,
    clientIp: string,
    onFailure: (failure: ProofFailure) => void,
  ): Promise<string> {
    const password = readPassword(typed);
    const now = deps.now();
    if (password === null) {
      const retryAfter = await deps.throttle.refused(user.email, clientIp, now, true);
      onFailure(retryAfter === null ? 'wrong_password' : 'throttled');
      if (retryAfter !== null) throw throttled(retryAfter);
      throw new HttpError('invalid_credentials');
    }
    // A live session of the account proves an earlier sign-in, as a device cookie does: guesses
    // from elsewhere that lock the account's sign-in do not lock its owner out of this check,
    // while guesses through this session still meet the (account, address) and address limits.
    const admission = await deps.throttle.admit(user.email, clientIp, now, true);
    if (!admission.admitted) {
      onFailure('throttled');
      throw throttled(admission.retryAfterSeconds);
    }
    let matches: boolean;
    try {
      matches = await deps.hasher.verify(user.passwordHash, password);
    } catch (error) {
      // Not checked (load shed): the attempt does not count.
      await deps.throttle.notChecked(admission.keys);
      if (error instanceof GateFullError) throw new HttpError('overloaded', { 'retry-after': '1' });
      throw error;
    }
    if (!matches) {
      onFailure('wrong_password');
      throw new HttpError('invalid_credentials');
    }
    await deps.throttle.succeeded(admission.keys, admission.pastEmailLock);
    return password;
  };
}

const throttled = (seconds: number) =>
  new HttpError('rate_limited', { 'retry-after': String(seconds) });
