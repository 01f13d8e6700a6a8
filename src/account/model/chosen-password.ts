import { HttpError } from '../../http/errors.js';
import { GateFullError } from '../../traffic/work-gate.js';
import type { PasswordHasher } from '../../users/hasher.js';
import { readNewPassword } from '../../users/password.js';

// The common-password list is large: loaded on the first new password, not at start-up.
const passwordPolicy = () => import('../../users/password-policy.js');

/**
 * A password someone chose (change, reset, sign-up, invitation), normalised as sign-in reads it,
 * or 422 `weak_password` saying why in words: the CLI's policy (`PASSWORD_MIN_LENGTH`, not on
 * the common list).
 */
export async function acceptableNewPassword(raw: string, minLength: number): Promise<string> {
  // Bounded before NFKC: every route that takes a new password calls this before any limit.
  const read = readNewPassword(raw);
  const { checkNewPassword, passwordProblemMessages } = await passwordPolicy();
  const problem = 'problem' in read ? read.problem : checkNewPassword(read.normalised, minLength);
  if (problem === null && 'normalised' in read) return read.normalised;
  const message = passwordProblemMessages[problem ?? 'too_long'](minLength);
  throw new HttpError('weak_password', {}, `${message[0]?.toUpperCase()}${message.slice(1)}.`);
}

/**
 * The argon2id hash of an accepted new password. A full hasher queue sheds as sign-in does:
 * 503 `overloaded` with Retry-After, nothing changed; `onFailure` first undoes what the caller
 * charged for the attempt.
 */
export async function hashNewPassword(
  hasher: PasswordHasher,
  normalised: string,
  onFailure?: () => Promise<void>,
): Promise<string> {
  try {
    return await hasher.hash(normalised);
  } catch (error) {
    await onFailure?.();
    if (error instanceof GateFullError) throw new HttpError('overloaded', { 'retry-after': '1' });
    throw error;
  }
}
