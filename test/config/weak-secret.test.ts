import { describe, expect, it } from 'vitest';
import { isWeakSecret } from '../../src/config/index.js';

describe('isWeakSecret', () => {
  it.each<[string, string, boolean]>([
    ['one character repeated is weak', 'a'.repeat(36), true],
    ['seven distinct characters are weak however long', 'abcdefg'.repeat(6), true],
    ['eight distinct characters repeated are weak', 'abcdefgh'.repeat(5), true],
    ['a pattern repeated with a partial copy at the end is weak', 'abcdefghabcdefgha', true],
    ['a pattern repeated with a foreign last character is not weak', 'abcdefghabcdefghX', false],
    ['a word repeated with a separator is weak', 'changeme-'.repeat(4), true],
    ['hex digits written out twice are weak', '0123456789abcdef'.repeat(2), true],
    ['the empty string is weak', '', true],
    [
      'eight distinct characters once are not weak (length is checked elsewhere)',
      'abcdefgh',
      false,
    ],
    ['a random base64 secret is not weak', 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt', false],
    [
      'a random hex secret is not weak',
      '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      false,
    ],
    // Only few characters and repetition are judged: an ordered run passes.
    ['the alphabet in order is not judged weak', 'abcdefghijklmnopqrstuvwxyzABCDEF', false],
    [
      'a pattern repeated less than twice is not weak',
      'abcdefghijklmnopqrstuvwxyzabcdefghijklm',
      false,
    ],
  ])('%s', (_behaviour, secret, expected) => {
    expect(isWeakSecret(secret)).toBe(expected);
  });
});
