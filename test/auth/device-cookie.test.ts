import { describe, expect, it } from 'vitest';
import { createDeviceCookies } from '../../src/auth/cookies/device-cookie.js';

const oldSecret = 'old-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const newSecret = 'new-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const now = Date.UTC(2026, 10, 24);
const dayMs = 86_400_000;

describe('device cookies', () => {
  const issued = createDeviceCookies([oldSecret]).issue('ada@example.com', 3, now);

  it('name the credential version they were issued under, for the caller to compare', () => {
    expect(createDeviceCookies([oldSecret]).verify(issued, 'ada@example.com', now)).toBe(3);
  });

  it('still verify after AUTH_SECRET is rotated while the old secret is listed', () => {
    expect(createDeviceCookies([newSecret, oldSecret]).verify(issued, 'ada@example.com', now)).toBe(
      3,
    );
    expect(createDeviceCookies([newSecret]).verify(issued, 'ada@example.com', now)).toBeNull();
  });

  it.each([
    ['for another email', issued, 'bob@example.com', now],
    ['after a year', issued, 'ada@example.com', now + 366 * dayMs],
    [
      'issued in the future',
      createDeviceCookies([oldSecret]).issue('ada@example.com', 3, now + dayMs),
      'ada@example.com',
      now,
    ],
    [
      'with its time changed',
      issued.replace(/^\d+/, (t) => String(Number(t) - 1)),
      'ada@example.com',
      now,
    ],
    // A credential change moved the version on: claiming the new one does not forge the MAC.
    ['with its version changed', issued.replace(/\.3\./, '.4.'), 'ada@example.com', now],
    ['with its MAC cut short', issued.slice(0, -1), 'ada@example.com', now],
    ['with a padded MAC', `${issued}=`, 'ada@example.com', now],
  ])('does not verify %s', (_case, value, email, at) => {
    expect(createDeviceCookies([oldSecret]).verify(value, email, at)).toBeNull();
  });
});
