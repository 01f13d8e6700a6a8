import type { Throttle } from '../../auth/signin/throttle.js';
import { HttpError } from '../../http/errors.js';
import { GateFullError } from '../../traffic/work-gate.js';
import type { PasswordHasher } from '../../users/hasher.js';
import { readPassword } from '../../users/password.js';
import {
  provePassword as proveOnce,
  type Admitted,
  type Proof,
} from '../../auth/signin/password-proof.js';
import { rateLimited } from '../attempts.js';
import type { DeviceCookies } from '../../auth/cookies/device-cookie.js';

export interface PasswordProofDeps {
  deviceCookies: DeviceCookies;
  throttle: Throttle;
  hasher: PasswordHasher;
  now: () => number;
}

/** Why a password proof failed, for the account's record. */
export type ProofFailure = 'wrong_password' | 'throttled';

/** What a password is checked against: an account's, or a pending sign-up's. */
export interface PasswordHolder {
  email: string;
  passwordHash: string;
  /** An account's (a pending sign-up has none): a device cookie must carry the same. */
  credentialVersion?: number;
}

export interface ProofOptions {
  /**
   * The request's device cookie (src/auth/cookies/device-cookie.ts). A device that signed in to the
   * account under its current credential version is known: guesses from elsewhere that lock the
   * account's sign-in do not lock its owner out of this check, while guesses from it still meet
   * the (account, address) and address limits. A session is not a device: holding one proves
   * nothing here (one session from four addresses could otherwise make 40 password checks
   * against a limit of 10), and a credential change ends what earlier sign-ins earned.
   */
  deviceCookie?: string | undefined;
  /** An admission the request already made (a code guess), reused rather than charged again. */
  admitted?: Admitted | undefined;
  /** The refusal's message (the catalogue's by default). */
  wrongMessage?: string;
}

/**
 * A password checked as sign-in checks one (the one proof, src/auth/signin/password-proof.ts): charged first against the same per-account and
 * per-address throttles (429 `rate_limited` with Retry-After when a limit is reached, nothing
 * hashed), one argon2 verification off the event loop, a success taking its failure charges
 * back. A wrong (or unreadable) password is 403 `invalid_credentials`. `onFailure` is told
 * before the error is thrown (the account's record).
 */
export function createPasswordProof(deps: PasswordProofDeps) {
  /** Whether the device cookie was issued to a sign-in under the holder's credential version. */
  const knownDevice = (holder: PasswordHolder, deviceCookie: string | undefined): boolean =>
    deviceCookie !== undefined &&
    holder.credentialVersion !== undefined &&
    deps.deviceCookies.verify(deviceCookie, holder.email, deps.now()) === holder.credentialVersion;
  return Object.assign(provePassword, { knownDevice });

  async function provePassword(
    holder: PasswordHolder,
    typed: string,
    clientIp: string,
    onFailure: (failure: ProofFailure) => void,
    options: ProofOptions = {},
  ): Promise<string> {
    const known = knownDevice(holder, options.deviceCookie);
    const wrongPassword = () => new HttpError('invalid_credentials', {}, options.wrongMessage);
    const password = readPassword(typed);
    const now = deps.now();
    if (password === null) {
      const retryAfter = await deps.throttle.refused(holder.email, clientIp, now, known);
      onFailure(retryAfter === null ? 'wrong_password' : 'throttled');
      if (retryAfter !== null) throw rateLimited(retryAfter);
      throw wrongPassword();
    }
    const scope = {
      email: holder.email,
      ip: clientIp,
      knownDevice: known,
      admitted: options.admitted,
    };
    let proof: Proof<PasswordHolder>;
    try {
      proof = await proveOnce(deps, scope, password, () => Promise.resolve(holder));
    } catch (error) {
      // Not checked (load shed): the attempt does not count.
      if (error instanceof GateFullError) throw new HttpError('overloaded', { 'retry-after': '1' });
      throw error;
    }
    if (proof.outcome === 'throttled') {
      onFailure('throttled');
      throw rateLimited(proof.retryAfterSeconds);
    }
    if (proof.outcome === 'wrong') {
      onFailure('wrong_password');
      throw wrongPassword();
    }
    return password;
  }
}
