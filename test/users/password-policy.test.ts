import { describe, expect, it } from 'vitest';
import {
  checkNewPassword,
  passwordProblemMessages,
  type PasswordProblem,
} from '../../src/users/password-policy.js';
import { codePointLength, normalisePassword, passwordMaxLength } from '../../src/users/password.js';

const minLength = 12;
const emoji = '\u{1f600}';
const fi = '\ufb01'; // the "fi" ligature: one code point, two after NFKC

describe('checkNewPassword', () => {
  it.each<[string, string, PasswordProblem | null]>([
    ['11 characters is too short', 'x7Kq!x7Kq!x', 'too_short'],
    ['12 characters is long enough', 'x7Kq!x7Kq!x7', null],
    ['1024 characters is accepted', 'x7Kq'.repeat(256), null],
    ['1025 characters is too long', `${'x7Kq'.repeat(256)}!`, 'too_long'],
    ['the empty password is too short', '', 'too_short'],
    ['length counts code points: 11 emoji are too short', emoji.repeat(11), 'too_short'],
    ['length counts code points: 12 emoji are enough', emoji.repeat(12), null],
    ['1024 emoji (2048 UTF-16 units) are accepted', emoji.repeat(1024), null],
    ['1025 emoji are too long', emoji.repeat(1025), 'too_long'],
    ['6 ligatures are 12 characters after NFKC: long enough', fi.repeat(6), null],
    ['a ligature short of 12 after NFKC is too short', `${fi.repeat(5)}x`, 'too_short'],
    ['512 ligatures are 1024 characters after NFKC: accepted', fi.repeat(512), null],
    ['513 ligatures are 1026 characters after NFKC: too long', fi.repeat(513), 'too_long'],
    ['12 letters with combining accents are 12 after NFKC', 'e\u0301'.repeat(12), null],
    [
      '11 letters with combining accents are too short after NFKC',
      'e\u0301'.repeat(11),
      'too_short',
    ],
    ['a roman numeral twelve is 3 characters after NFKC', '\u216b', 'too_short'],
    [
      '31 combining marks in a row could never sign in',
      `correct horse #${'\u0301'.repeat(31)}`,
      'mark_run',
    ],
    ['30 combining marks in a row are accepted', `correct horse #${'\u0301'.repeat(30)}`, null],
    ['a too-short listed password is reported as too short', 'password', 'too_short'],
    ['a listed password of 12 characters is common', '123456789012', 'common'],
    ['a listed password in capitals is common', '1Q2W3E4R5T6Y', 'common'],
    ['a listed word padded with digits is common', 'password1234567', 'common'],
    ['a listed word with capitals and symbol padding is common', 'Password1234567!', 'common'],
    ['a listed word padded with a dash and digits is common', 'PRINCESS-2024', 'common'],
    ['a listed word padded with underscores is common', 'football____', 'common'],
    ['a listed word padded with a space and digits is common', 'welcome 2024', 'common'],
    ['a listed word padded with punctuation is common', 'superman...!', 'common'],
    ['a listed word repeated around digits is not caught', 'dragon123dragon', null],
    [
      'full-width letters fold to a listed word padded with digits',
      '\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44\uff11\uff12\uff13\uff14',
      'common',
    ],
    [
      // `\W` is ASCII-only even with the u flag: letters outside ASCII count as padding.
      'letters outside ASCII after a listed word count as padding',
      'password\u0434\u0440\u0430\u043a\u043e\u043d',
      'common',
    ],
    ['a listed word with padding in front is not caught', '123456dragon', null],
    ['a listed word inside other letters is not caught', 'xdragon12345', null],
    ['two listed words joined are not caught', 'trustno1trustno1', null],
    ['a stem under 4 characters is not looked up', 'abc1!!!!!!!!!', null],
    ['digits alone are judged whole, not as an empty stem', '1234567890123', null],
    ['symbols alone have an empty stem and are accepted', '____________', null],
    [
      'a non-Latin word with digits has an empty stem and is accepted',
      '\u043f\u0430\u0440\u043e\u043b\u044c123456',
      null,
    ],
    ['a passphrase is accepted', 'correct horse battery staple', null],
  ])('%s', (_behaviour, raw, expected) => {
    expect(checkNewPassword(normalisePassword(raw), minLength)).toBe(expected);
  });

  it.each<[string, number, string, PasswordProblem | null]>([
    ['a lower minimum accepts 8 characters', 8, 'x7Kq!x7K', null],
    ['a lower minimum still refuses 7 characters', 8, 'x7Kq!x7', 'too_short'],
    ['a minimum of 1024 accepts exactly 1024 characters', 1024, 'x7Kq'.repeat(256), null],
    ['a minimum of 1024 refuses 1023 characters', 1024, 'x7Kq'.repeat(256).slice(1), 'too_short'],
  ])('%s', (_behaviour, min, raw, expected) => {
    expect(checkNewPassword(normalisePassword(raw), min)).toBe(expected);
  });

  // A sign-in password over the JSON API can carry lone surrogates (`"\udc00"`); each is one code
  // point (`[...'\udc00'].length` is 1), or 3,072 of them would ride free past the 1,024 bound.
  it.each<[string, string, PasswordProblem | null]>([
    ['1024 letters and a lone low surrogate are too long', `${'a'.repeat(1024)}\udc00`, 'too_long'],
    ['12 lone low surrogates are 12 code points: long enough', '\udc00'.repeat(12), null],
  ])('%s', (_behaviour, raw, expected) => {
    expect(checkNewPassword(normalisePassword(raw), minLength)).toBe(expected);
  });
});

describe('codePointLength', () => {
  it.each<[string, string, number]>([
    ['the empty string has no code points', '', 0],
    ['ASCII counts one per character', 'abc', 3],
    ['a character outside the BMP counts once', emoji, 1],
    ['a lone high surrogate counts once', '\ud800', 1],
    ['a letter and a combining accent count twice', 'e\u0301', 2],
  ])('%s', (_behaviour, text, expected) => {
    expect(codePointLength(text)).toBe(expected);
    expect(codePointLength(text)).toBe([...text].length);
  });

  it.each<[string, string, number]>([
    ['a lone low surrogate counts once', '\udc00', 1],
    ['a low surrogate before a high one counts twice', '\udc00\ud800', 2],
    ['a pair then a lone low surrogate counts twice', '\ud83d\ude00\udc00', 2],
  ])('%s', (_behaviour, text, expected) => {
    expect(codePointLength(text)).toBe(expected);
  });
});

describe('normalisePassword', () => {
  it.each<[string, string, string]>([
    ['NFKC composes a letter and its combining accent', 'e\u0301', '\u00e9'],
    ['NFKC folds the Angstrom sign to Å', '\u212b', '\u00c5'],
    ['NFKC folds full-width letters to ASCII', '\uff30\uff57', 'Pw'],
    ['case is kept', 'PassWord', 'PassWord'],
    ['spaces around the password are kept: nothing is trimmed', '  pass  ', '  pass  '],
    ['a long password is never truncated', 'x'.repeat(5000), 'x'.repeat(5000)],
  ])('%s', (_behaviour, raw, expected) => {
    expect(normalisePassword(raw)).toBe(expected);
  });
});

describe('passwordProblemMessages', () => {
  it.each<[PasswordProblem, string]>([
    ['too_short', 'the password must be at least 12 characters'],
    ['too_long', `the password must be at most ${passwordMaxLength} characters`],
    ['mark_run', 'the password must not have more than 30 combining marks in a row'],
    ['common', 'the password is on a list of commonly used passwords; choose another'],
  ])('%s reads as: %s', (problem, expected) => {
    expect(passwordProblemMessages[problem](minLength)).toBe(expected);
  });

  it('the longest password is 1024 code points', () => {
    expect(passwordMaxLength).toBe(1024);
  });
});
