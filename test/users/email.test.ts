import { describe, expect, it } from 'vitest';
import { emailMaxLength, isMailboxAddress, normaliseEmail } from '../../src/users/email.js';

describe('normaliseEmail', () => {
  it.each<[string, string, string]>([
    ['capitals are lower-cased, local part included', 'Ada@Example.COM', 'ada@example.com'],
    ['spaces and tabs around the address are trimmed', '  ada@example.com\t', 'ada@example.com'],
    [
      'Unicode spaces around the address are trimmed',
      '\u00a0ada@example.com\u3000',
      'ada@example.com',
    ],
    ['a byte-order mark before the address is trimmed', '\ufeffada@example.com', 'ada@example.com'],
    [
      'full-width letters are NFKC-folded to ASCII',
      '\uff41\uff44\uff41@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.\uff43\uff4f\uff4d',
      'ada@example.com',
    ],
    ['a ligature is NFKC-expanded', '\ufb03@example.com', 'ffi@example.com'],
    ['a circled letter is NFKC-folded and lower-cased', '\u24b6@example.com', 'a@example.com'],
    ['a circled digit is NFKC-folded', '\u2460@example.com', '1@example.com'],
    ['a combining accent is composed with its letter', 'a\u0301@example.com', '\u00e1@example.com'],
    ['the precomposed letter stays as it is', '\u00e1@example.com', '\u00e1@example.com'],
    ['the Kelvin sign becomes a plain k', '\u212a@example.com', 'k@example.com'],
    ['the ohm sign becomes a lower-case omega', '\u2126@example.com', '\u03c9@example.com'],
    ['a title-case digraph is split and lower-cased', '\u01c5@example.com', 'd\u017e@example.com'],
    [
      'a capital dotted I lower-cases to i with a combining dot',
      '\u0130@example.com',
      'i\u0307@example.com',
    ],
    ['sharp s is kept, not folded to ss', 'stra\u00dfe@example.com', 'stra\u00dfe@example.com'],
    [
      'SS lower-cases to ss, another address than sharp s',
      'STRASSE@example.com',
      'strasse@example.com',
    ],
    [
      'a zero-width space inside is kept: it is another address',
      'ada@ex\u200bample.com',
      'ada@ex\u200bample.com',
    ],
    ['a one-dot leader is NFKC-folded to a full stop', 'x@\u2024com', 'x@.com'],
    ['inner spaces are kept (and refused later)', 'a da@example.com', 'a da@example.com'],
  ])('%s', (_behaviour, raw, expected) => {
    expect(normaliseEmail(raw)).toBe(expected);
    // One account however it is typed: normalising again changes nothing.
    expect(normaliseEmail(expected)).toBe(expected);
  });
});

describe('isMailboxAddress', () => {
  const local = 'a'.repeat(64);
  it.each<[string, string, boolean]>([
    ['the shortest shape, one character either side of @, is a mailbox', 'a@b', true],
    ['a domain without a dot is a mailbox (RFC 5322 dot-atom)', 'ada@localhost', true],
    ['letters outside ASCII are a mailbox (RFC 6532)', '\u00e9@\u00fc', true],
    ['an emoji local part is a mailbox', '\u{1f600}@example.com', true],
    ['plus, dots and hyphens are a mailbox', 'ada.l+news@mail-1.example.com', true],
    ['a display name with a mailbox in brackets is refused', 'owner<test@example.com>', false],
    ['a quoted display name is refused', '"owner" <test@example.com>', false],
    ['a bracketed address alone is refused', '<test@example.com>', false],
    ['two addresses with a comma are refused', 'a@example.com,b@example.com', false],
    ['a semicolon list is refused', 'a@example.com;b@example.com', false],
    ['a comment is refused', 'a(x)@example.com', false],
    ['a group is refused', 'g:a@example.com;', false],
    ['a domain literal is refused', 'a@[127.0.0.1]', false],
    ['a leading dot is refused', '.a@example.com', false],
    ['two dots in a row are refused', 'a..b@example.com', false],
    ['a domain ending in a dot is refused', 'a@example.com.', false],
    ['a label starting with a hyphen is refused', 'a@-example.com', false],
    ['a zero-width space (a format character) is refused', 'a@b\u200bc', false],
    ['a right-to-left override is refused', 'a\u202e@example.com', false],
    ['a tab is refused', 'a\t@b', false],
    ['a carriage return is refused', 'a@b\r', false],
    ['DEL is refused', 'a\u007f@b', false],
    ['no @ is not an address', 'ada', false],
    ['the empty string is not an address', '', false],
    ['nothing before @ is not an address', '@example.com', false],
    ['nothing after @ is not an address', 'ada@', false],
    ['two @ in a row is not an address', 'a@@b', false],
    ['two @ apart is not an address', 'a@b@c', false],
    ['a space in the local part is refused', 'a b@c', false],
    ['a quoted local part with a space is refused', '"a b"@c', false],
    ['a quoted local part is refused', '"ab"@c', false],
    ['a space in the domain is refused', 'a@b c', false],
    ['a no-break space is whitespace and refused', 'a@b\u00a0c', false],
    ['an ideographic space is whitespace and refused', 'a@b\u3000c', false],
    ['a line feed is refused', 'a\n@b', false],
    ['a line separator is refused', 'a@b\u2028', false],
    ['a NUL byte is refused', 'a\u0000@b', false],
    [`exactly ${emailMaxLength} characters is a mailbox`, `${local}@${'b'.repeat(189)}`, true],
    [`${emailMaxLength + 1} characters is refused`, `${local}@${'b'.repeat(190)}`, false],
    [
      'the length counts UTF-16 units: an emoji counts two',
      `\u{1f600}@${'b'.repeat(emailMaxLength - 3)}`,
      true,
    ],
    [
      'an address one unit too long because of an emoji is refused',
      `\u{1f600}@${'b'.repeat(emailMaxLength - 2)}`,
      false,
    ],
  ])('%s', (_behaviour, address, expected) => {
    expect(isMailboxAddress(address)).toBe(expected);
  });

  it('the longest address is 254 characters (RFC 5321 path limit less the brackets)', () => {
    expect(emailMaxLength).toBe(254);
  });
});
