import { HttpError } from '../../http/errors.js';
import { GateFullError } from '../../traffic/work-gate.js';
import type { PasswordHasher } from '../../users/hasher.js';
import { normalisePassword } from '../../users/password.js';

// The common-password list is large: loaded on the first new password, not at start-up.
const passwordPolicy = () => import('../../users/password-policy.js');

/**
 * A password someone chose (change, reset, sign-up, invitation), normalised as sign-in reads it,
 * or 422 `weak_password` saying why in words: the CLI's policy (`PASSWORD_MIN_LENGTH`, not on
 * the common list).
 */
export async function acceptableNewPassword(raw: string, minLength: number): Promise<string> {
  const normalised = normalisePassword(raw);
  const { checkNewPassword, passwordProblemMessages } = await passwordPolicy();
  const problem = checkNewPassword(normalised, minLength);
  if (problem !== null) {
    const message = passwordProblemMessages[problem](minLength);
    throw new HttpError('weak_password', {}, `${message[0]?.toUpperCase()}${message.slice(1)}.`);
  }
  return normalised;
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
