import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a device stays known after it signed in: a year, as a browser keeps a cookie. */
export const deviceCookieMaxAgeSeconds = 365 * 24 * 60 * 60;

/**
 * The device cookie's name. Over https it is `__Host-` prefixed, so a sibling subdomain cannot
 * plant one (the browser accepts it only with Secure, Path=/ and no Domain).
 */
export function deviceCookieName(secure: boolean): string {
  return secure ? '__Host-gatehouse.device' : 'gatehouse.device';
}

/** The whole Set-Cookie line for a value issued by `DeviceCookies.issue`. */
export function deviceSetCookie(value: string, secure: boolean): string {
  const attributes = [
    `${deviceCookieName(secure)}=${value}`,
    'Path=/',
    `Max-Age=${deviceCookieMaxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}

// The label keeps these MACs apart from anything else ever made with AUTH_SECRET. A cookie
// issued before devices had an id has none in its MAC, which still verifies.
function mac(
  secret: string,
  email: string,
  credentialVersion: number,
  issuedAtSeconds: number,
  deviceId: string | undefined,
) {
  const hmac = createHmac('sha256', secret).update(
    `gatehouse device cookie\0${email}\0${credentialVersion}\0${issuedAtSeconds}`,
  );
  if (deviceId !== undefined) hmac.update(`\0${deviceId}`);
  return hmac.digest();
}

// `<issued-at>.<credential version>.<device id>.<HMAC>`; before device ids, without the id.
const valuePattern = /^(\d{1,12})\.(\d{1,9})\.(?:([A-Za-z0-9_-]{22})\.)?([A-Za-z0-9_-]{43})$/;

/**
 * The id of the device holding `value`: 128 random bits given at its first sign-in here and kept
 * by every cookie issued after it, whichever account signs in (src/account/new-device/ keeps
 * the ids an account has signed in from). Read without the MAC, which binds the cookie to an
 * account the caller may not know: an id is a name, no proof. Null: the cookie has none (no
 * cookie, or one issued before ids).
 */
export function deviceIdOf(value: string | undefined): string | null {
  return value === undefined ? null : (valuePattern.exec(value)?.[3] ?? null);
}

/** A new device's id. */
export const newDeviceId = (): string => randomBytes(16).toString('base64url');

/**
 * Proof that this browser signed in to an account here before:
 * `<issued-at>.<credential version>.<device id>.<HMAC>` over the normalised email, the account's
 * credential version at that sign-in, the issue time and the device's id, with the first
 * AUTH_SECRET (any listed one verifies, so a rotation keeps devices known). The email is not in the cookie; only a sign-in
 * that types the same email can be matched to it. It lets its holder past the per-email lock,
 * never past the per-address or per-(email, address) limits; and only while the account's
 * credential version is still the one it was issued under: a password change or reset, an
 * address change or a lock ends the trust every earlier sign-in earned (an intruder who signed
 * in once does not keep skipping the per-account limit against the new password).
 */
export function createDeviceCookies(secrets: readonly string[]) {
  const [current] = secrets;
  if (current === undefined) throw new Error('device cookies need a secret');
  const cookies = {
    issue(email: string, credentialVersion: number, nowMs: number, deviceId: string): string {
      const issuedAtSeconds = Math.floor(nowMs / 1000);
      const tag = mac(current, email, credentialVersion, issuedAtSeconds, deviceId);
      return `${issuedAtSeconds}.${credentialVersion}.${deviceId}.${tag.toString('base64url')}`;
    },

    /**
     * What a sign-in of `account` leaves in the browser that brought `held` (or none): a cookie
     * for the account under the device's id (a new id for a device without one).
     */
    reissue(
      held: string | undefined,
      account: { email: string; credentialVersion: number },
      nowMs: number,
    ): IssuedDevice {
      const id = deviceIdOf(held) ?? newDeviceId();
      return {
        cookie: cookies.issue(account.email, account.credentialVersion, nowMs, id),
        id,
        // Under any version: a password change since does not make the browser a stranger.
        cookieVerified: held !== undefined && cookies.verify(held, account.email, nowMs) !== null,
      };
    },

    /**
     * The credential version `value` was issued under, when it was issued here for `email`
     * within the last year; else null. The caller compares it with the account's.
     */
    verify(value: string, email: string, nowMs: number): number | null {
      const match = valuePattern.exec(value);
      if (match === null) return null;
      const issuedAtSeconds = Number(match[1]);
      const credentialVersion = Number(match[2]);
      const ageSeconds = nowMs / 1000 - issuedAtSeconds;
      // A little slack for clocks that differ between instances.
      if (ageSeconds > deviceCookieMaxAgeSeconds || ageSeconds < -300) return null;
      const deviceId = match[3];
      const given = Buffer.from(match[4] as string, 'base64url');
      const known = secrets.some((secret) =>
        timingSafeEqual(given, mac(secret, email, credentialVersion, issuedAtSeconds, deviceId)),
      );
      return known ? credentialVersion : null;
    },
  };
  return cookies;
}

/** A sign-in's device cookie, as `DeviceCookies.reissue` gives it. */
export interface IssuedDevice {
  /** The cookie's value. */
  cookie: string;
  /** The device's id in it. */
  id: string;
  /** The cookie the browser brought verified for this account: it signed in to it here before. */
  cookieVerified: boolean;
}

export type DeviceCookies = ReturnType<typeof createDeviceCookies>;
