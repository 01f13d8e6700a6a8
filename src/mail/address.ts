/** RFC 5321's longest path (256) less its angle brackets. */
export const emailMaxLength = 254;

// A bare addr-spec (RFC 5322 3.4.1, dot-atom on both sides; RFC 6532 lets UTF-8 in) and nothing
// else: no display name, no angle brackets, no comma-separated list, no quoted local part, no
// comment, no domain literal, no control, format or separator character. Anything more is
// something a mail library or relay parses again, and then delivers to the mailbox it finds
// inside (`owner<test@example.com>` went to test@example.com, not to the account's address).
const nonAscii = '[^\\x00-\\x7f\\p{C}\\p{Z}]';
const atext = `(?:[a-z0-9!#$%&'*+/=?^_\`{|}~-]|${nonAscii})`;
const label = `(?:[a-z0-9]|${nonAscii})(?:(?:[a-z0-9-]|${nonAscii})*(?:[a-z0-9]|${nonAscii}))?`;
const addrSpec = new RegExp(`^${atext}+(?:\\.${atext}+)*@${label}(?:\\.${label})*$`, 'iu');

/**
 * Whether `address` is one bare mailbox, `local@domain`, at most 254 UTF-16 units: what an
 * account may hold and what the mailer may send to. Checked on the normalised form.
 */
export function isMailboxAddress(address: string): boolean {
  return address.length <= emailMaxLength && addrSpec.test(address);
}
