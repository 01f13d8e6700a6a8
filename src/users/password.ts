import { hasLongMarkRun } from './mark-runs.js';

/** Longest password accepted, in code points, at sign-in and when set. */
export const passwordMaxLength = 1024;

/**
 * Longest password read at sign-in, in UTF-16 units as typed: twice the limit holds 1,024 code
 * points outside the BMP, and twice more the marks NFKC composes into the letters before them.
 */
export const passwordRawMaxLength = passwordMaxLength * 4;

/**
 * NIST 800-63B: normalise (NFKC), never truncate, no composition rules. Only on input that
 * passed `rawPasswordProblem`: on anything else NFKC's cost is unbounded (use `readPassword`
 * or `readNewPassword`, which check first).
 */
export function normalisePassword(raw: string): string {
  return raw.normalize('NFKC');
}

/** Why typed input cannot be a password, known before NFKC. */
export type RawPasswordProblem = 'too_long' | 'mark_run';

/**
 * The one bound every password passes before NFKC, in time linear in its length: at most
 * `passwordRawMaxLength` UTF-16 units and no run of more than 30 combining marks. NFKC sorts a
 * run of marks by insertion: 4,095 marks of two alternating classes held the event loop for
 * milliseconds per request, before any throttle or limit was charged.
 */
export function rawPasswordProblem(raw: string): RawPasswordProblem | null {
  if (raw.length > passwordRawMaxLength) return 'too_long';
  if (hasLongMarkRun(raw)) return 'mark_run';
  return null;
}

/**
 * The password typed at sign-in, normalised, or null when no password can be it. Its length and
 * its runs of marks are checked before NFKC, whose cost they bound.
 */
export function readPassword(raw: string): string | null {
  if (rawPasswordProblem(raw) !== null) return null;
  const password = normalisePassword(raw);
  return codePointLength(password) > passwordMaxLength ? null : password;
}

/**
 * A new password as typed (change, reset, sign-up, invitation, the CLI), normalised once it
 * passed the bound before NFKC, or the problem that bound found. The policy (length, common
 * passwords) is checked on the normalised form by the caller.
 */
export function readNewPassword(
  raw: string,
): { normalised: string } | { problem: RawPasswordProblem } {
  const problem = rawPasswordProblem(raw);
  return problem === null ? { normalised: normalisePassword(raw) } : { problem };
}

export function codePointLength(text: string): number {
  // UTF-16 length minus the second half of each surrogate pair, without copying the string. Only
  // a low surrogate that follows a high one is half of a pair: a lone one (JSON can carry it) is
  // a code point of its own, or 3,072 of them would ride free past the 1,024 limit.
  let count = text.length;
  for (let i = 1; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xdc00 && unit <= 0xdfff) {
      const previous = text.charCodeAt(i - 1);
      if (previous >= 0xd800 && previous <= 0xdbff) count -= 1;
    }
  }
  return count;
}
