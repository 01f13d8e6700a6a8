import { describe, expect, it } from 'vitest';
import { emailRawMaxLength, readEmail } from '../../src/users/email.js';
import { hasLongMarkRun, markRunMax } from '../../src/users/mark-runs.js';
import { passwordRawMaxLength, readPassword } from '../../src/users/password.js';

const acute = '\u0301';
const dotBelow = '\u0323';

describe('hasLongMarkRun', () => {
  it.each<[string, string, boolean]>([
    ['30 combining marks after a letter are allowed', `a${acute.repeat(30)}`, false],
    ['31 combining marks after a letter are a long run', `a${acute.repeat(31)}`, true],
    [
      '31 marks of two classes (reordered by NFKC) are a long run',
      `a${`${acute}${dotBelow}`.repeat(16)}`,
      true,
    ],
    [
      'a letter between two runs of 30 ends the first',
      `a${acute.repeat(30)}b${acute.repeat(30)}`,
      false,
    ],
    ['a run at the very start counts', acute.repeat(31), true],
    [
      'a long run after 30 short ones is found',
      `${`a${acute}`.repeat(30)}${acute.repeat(31)}`,
      true,
    ],
    [
      'marks outside the BMP count one per code point: 30 are allowed',
      `a${'\u{1d165}'.repeat(30)}`,
      false,
    ],
    [
      'marks outside the BMP count one per code point: 31 are a long run',
      `a${'\u{1d165}'.repeat(31)}`,
      true,
    ],
    [
      'half-width kana sound marks (NFKC makes them combining) count',
      `\uff76${'\uff9e\uff9f'.repeat(16)}`,
      true,
    ],
    ['spacing marks count too (a loose bound)', `\u0915${'\u093e'.repeat(31)}`, true],
    ['ordinary text has no long run', 'correct horse battery staple \u00e9\u00e8 \u{1f600}', false],
  ])('%s', (_behaviour, text, expected) => {
    expect(hasLongMarkRun(text)).toBe(expected);
  });

  it('the bound is the 30 of UAX #15 (Stream-Safe Text Format)', () => {
    expect(markRunMax).toBe(30);
  });
});

describe('readPassword', () => {
  it.each<[string, string, string | null]>([
    ['a password reads as its NFKC form', '\uff30\uff57 e\u0301', 'Pw \u00e9'],
    [
      '1,024 letters with 2 marks each NFKC composes (3,072 units) read as 1,024',
      `\u1f00${acute}\u0345`.repeat(1024),
      '\u1f84'.repeat(1024),
    ],
    ['1,024 emoji (2,048 units) are read', '\u{1f600}'.repeat(1024), '\u{1f600}'.repeat(1024)],
    [
      'past 4 × 1,024 units is refused before NFKC, however much NFKC would compose',
      '\u{1d6c2}\u0313\u0301\u0345'.repeat(820),
      null,
    ],
    ['1,025 code points after NFKC are refused', '\ufb01'.repeat(513), null],
    ['31 combining marks in a row are refused before NFKC', `a${acute.repeat(31)}`, null],
    ['30 combining marks in a row are read', `a${acute.repeat(30)}`, `\u00e1${acute.repeat(29)}`],
  ])('%s', (_behaviour, raw, expected) => {
    expect(readPassword(raw)).toBe(expected);
  });

  it('the raw bound is 4 × the 1,024 code points, in UTF-16 units', () => {
    expect(passwordRawMaxLength).toBe(4096);
  });
});

describe('readEmail', () => {
  it('the raw bound is 4 × 254 UTF-16 units', () => {
    expect(emailRawMaxLength).toBe(1016);
  });

  it.each<[string, string, string | null]>([
    ['an address reads trimmed, NFKC and lower-cased', '  Ada@Example.COM ', 'ada@example.com'],
    [
      'an address of decomposed letters reads composed',
      `e${acute}@example.com`,
      '\u00e9@example.com',
    ],
    [
      'up to 4 × 254 units are read, however much NFKC composes',
      `${'\u{1d6c2}\u0313\u0301\u0345'.repeat(200)}@b.c`,
      `${'\u1f84'.repeat(200)}@b.c`,
    ],
    [
      'past 4 × 254 units is refused before NFKC, however much NFKC would compose',
      `${'\u{1d6c2}\u0313\u0301\u0345'.repeat(204)}@b`,
      null,
    ],
    [
      '31 combining marks in a row are refused before NFKC',
      `a${acute.repeat(31)}@example.com`,
      null,
    ],
    ['no @ is refused', 'ada', null],
    ['a display name with a mailbox in brackets is refused', 'owner<test@example.com>', null],
    [
      'a fullwidth bracket NFKC folds into one is refused',
      'owner\uff1ctest@example.com\uff1e',
      null,
    ],
    ['a comma-separated list is refused', 'a@example.com,test@example.com', null],
    ['over 254 units after NFKC is refused', `${'a'.repeat(243)}@example.com`, null],
  ])('%s', (_behaviour, raw, expected) => {
    expect(readEmail(raw)).toBe(expected);
  });
});
