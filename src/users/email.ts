import { hasLongMarkRun } from './mark-runs.js';

export const emailMaxLength = 254;

/**
 * Longest address read at sign-in, in UTF-16 units as typed: NFKC composes a letter and its
 * marks into one character, so a typed address may be longer than the one it names.
 */
export const emailRawMaxLength = emailMaxLength * 4;

/** Trim, Unicode NFKC, lower-case: one account however the address is typed. */
export function normaliseEmail(raw: string): string {
  return raw.trim().normalize('NFKC').toLowerCase();
}

// Deliberately loose: the store compares normalised strings; this only rejects what cannot be an address.
// A NUL byte is refused outright: PostgreSQL cannot store one and C code would cut the string.
const emailShape = /^[^\s@]+@[^\s@]+$/u;

export function isPlausibleEmail(normalised: string): boolean {
  return (
    normalised.length <= emailMaxLength && !normalised.includes('\0') && emailShape.test(normalised)
  );
}

/**
 * The account an address typed at sign-in names, or null when it cannot name one. Its length
 * and its runs of marks are checked before NFKC, whose cost they bound.
 */
export function readEmail(raw: string): string | null {
  if (raw.length > emailRawMaxLength || hasLongMarkRun(raw)) return null;
  const email = normaliseEmail(raw);
  return isPlausibleEmail(email) ? email : null;
}
