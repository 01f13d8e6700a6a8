import { dictionary } from '@zxcvbn-ts/language-common';
import { hasLongMarkRun, markRunMax } from './mark-runs.js';
import { codePointLength, passwordMaxLength } from './password.js';

// Only the CLI sets passwords, so only it loads this list: the server starts without it.

let commonPasswords: Set<string> | undefined;

// ~49 000 passwords from breach corpora, shipped inside the package: the check works offline.
function common(): Set<string> {
  commonPasswords ??= new Set(dictionary['passwords-common']);
  return commonPasswords;
}

export type PasswordProblem = 'too_short' | 'too_long' | 'mark_run' | 'common';

export const passwordProblemMessages: Record<PasswordProblem, (min: number) => string> = {
  too_short: (min) => `the password must be at least ${min} characters`,
  too_long: () => `the password must be at most ${passwordMaxLength} characters`,
  mark_run: () => `the password must not have more than ${markRunMax} combining marks in a row`,
  common: () => 'the password is on a list of commonly used passwords; choose another',
};

/** The reason a new password is refused, or null when it is acceptable. */
export function checkNewPassword(normalised: string, minLength: number): PasswordProblem | null {
  const length = codePointLength(normalised);
  if (length < minLength) return 'too_short';
  if (length > passwordMaxLength) return 'too_long';
  // Sign-in refuses such a password before its NFKC step (mark-runs.ts): it could never be used.
  if (hasLongMarkRun(normalised)) return 'mark_run';
  const lower = normalised.toLowerCase();
  // "password1234567" is a listed word padded with digits: refuse padding of listed words too.
  const stem = lower.replace(/[\d\W_]+$/u, '');
  if (common().has(lower) || (stem.length >= 4 && common().has(stem))) return 'common';
  return null;
}
