import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createDeviceCookies,
  deviceIdOf,
  newDeviceId,
} from '../../src/auth/cookies/device-cookie.js';

const oldSecret = 'old-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const newSecret = 'new-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const now = Date.UTC(2026, 10, 24);
const dayMs = 86_400_000;
const deviceId = newDeviceId();

/** A cookie as releases before device ids issued it: `<issued-at>.<version>.<HMAC>`. */
function idlessCookie(secret: string, email: string, version: number, at: number) {
  const seconds = Math.floor(at / 1000);
  const tag = createHmac('sha256', secret)
    .update(`gatehouse device cookie\0${email}\0${version}\0${seconds}`)
    .digest('base64url');
  return `${seconds}.${version}.${tag}`;
}

describe('device cookies', () => {
  const issued = createDeviceCookies([oldSecret]).issue('ada@example.com', 3, now, deviceId);

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
      createDeviceCookies([oldSecret]).issue('ada@example.com', 3, now + dayMs, deviceId),
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
    // The id is under the MAC: another device's id does not make a cookie this account's.
    ['with its device id changed', issued.replace(deviceId, newDeviceId()), 'ada@example.com', now],
    ['with its device id taken out', issued.replace(`${deviceId}.`, ''), 'ada@example.com', now],
    ['with a padded MAC', `${issued}=`, 'ada@example.com', now],
  ])('does not verify %s', (_case, value, email, at) => {
    expect(createDeviceCookies([oldSecret]).verify(value, email, at)).toBeNull();
  });

  it('issued before device ids, still verify (no id in them)', () => {
    const idless = idlessCookie(oldSecret, 'ada@example.com', 3, now);
    expect(createDeviceCookies([oldSecret]).verify(idless, 'ada@example.com', now)).toBe(3);
    expect(deviceIdOf(idless)).toBeNull();
  });

  it('keep the device id across re-issues, whichever account signs in, and say whether it was this one', () => {
    const cookies = createDeviceCookies([oldSecret]);
    expect(deviceIdOf(issued)).toBe(deviceId);
    const ada = { email: 'ada@example.com', credentialVersion: 4 };
    const again = cookies.reissue(issued, ada, now + dayMs);
    expect(again).toMatchObject({ id: deviceId, cookieVerified: true });
    expect(cookies.verify(again.cookie, 'ada@example.com', now + dayMs)).toBe(4);
    // Another account in the same browser: the same device, not a cookie of that account.
    const bob = cookies.reissue(
      again.cookie,
      { email: 'bob@example.com', credentialVersion: 0 },
      now,
    );
    expect(bob).toMatchObject({ id: deviceId, cookieVerified: false });
    // No cookie, or one without an id: a new device.
    const fresh = cookies.reissue(undefined, ada, now);
    expect(fresh.id).not.toBe(deviceId);
    expect(fresh.cookieVerified).toBe(false);
    const idless = cookies.reissue(idlessCookie(oldSecret, 'ada@example.com', 3, now), ada, now);
    expect(idless.cookieVerified).toBe(true);
    expect(idless.id).toMatch(/^[\w-]{22}$/);
  });
});
