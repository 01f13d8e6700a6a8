import { emailMaxLength, isMailboxAddress } from '../mail/address.js';
import { hasLongMarkRun } from './mark-runs.js';

// What an address may be is the mailer's rule (src/mail/address.ts): one for accounts and mail.
export { emailMaxLength, isMailboxAddress };

/**
 * Longest address read at sign-in, in UTF-16 units as typed: NFKC composes a letter and its
 * marks into one character, so a typed address may be longer than the one it names.
 */
export const emailRawMaxLength = emailMaxLength * 4;

/** Trim, Unicode NFKC, lower-case: one account however the address is typed. */
export function normaliseEmail(raw: string): string {
  return raw.trim().normalize('NFKC').toLowerCase();
}

/**
 * The account an address typed in a form, a JSON body or the CLI names, or null when it is not
 * one bare mailbox. Its length and its runs of marks are checked before NFKC, whose cost they
 * bound.
 */
export function readEmail(raw: string): string | null {
  if (raw.length > emailRawMaxLength || hasLongMarkRun(raw)) return null;
  const email = normaliseEmail(raw);
  return isMailboxAddress(email) ? email : null;
}
