import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyReuse } from '../../src/config/read/key-reuse.js';

const bytes = randomBytes(33);
const other = randomBytes(33);
const advice = 'generate one with: openssl rand -base64 33';
const named = (auth: string[], factor: string[]) => [
  { variable: 'AUTH_SECRET', keys: auth, advice },
  { variable: 'FACTOR_KEY', keys: factor, advice },
];

describe('keys that are the same material', () => {
  it.each<[string, string[], string[], 'refused' | 'rotating' | 'none']>([
    ['the same text', [bytes.toString('base64')], [bytes.toString('base64')], 'refused'],
    [
      'base64 and hex of the same bytes',
      [bytes.toString('base64')],
      [bytes.toString('hex')],
      'refused',
    ],
    ['base64 and base64url', [bytes.toString('base64')], [bytes.toString('base64url')], 'refused'],
    [
      'upper-case hex and base64',
      [bytes.toString('hex').toUpperCase()],
      [bytes.toString('base64')],
      'refused',
    ],
    [
      'one listed second on the other side',
      [other.toString('base64'), bytes.toString('base64')],
      [bytes.toString('hex')],
      'refused',
    ],
    [
      'an older entry of the later list (a rotation away)',
      [bytes.toString('base64')],
      [other.toString('base64'), bytes.toString('base64')],
      'rotating',
    ],
    ['two random keys', [bytes.toString('base64')], [other.toString('base64')], 'none'],
    ['one unset', [bytes.toString('base64')], [], 'none'],
    [
      'a passphrase and another',
      ['correct horse battery staple and more'],
      ['correct horse battery staple and less'],
      'none',
    ],
  ])('%s', (_, auth, factor, expected) => {
    const found = keyReuse(named(auth, factor));
    expect({ refused: found.refused.length > 0, rotating: found.rotating.length > 0 }).toEqual({
      refused: expected === 'refused',
      rotating: expected === 'rotating',
    });
  });
});
