import { createHmac, timingSafeEqual } from 'node:crypto';

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

// The label keeps these MACs apart from anything else ever made with AUTH_SECRET.
function mac(secret: string, email: string, credentialVersion: number, issuedAtSeconds: number) {
  return createHmac('sha256', secret)
    .update(`gatehouse device cookie\0${email}\0${credentialVersion}\0${issuedAtSeconds}`)
    .digest();
}

/**
 * Proof that this browser signed in to an account here before:
 * `<issued-at>.<credential version>.<HMAC>` over the normalised email, the account's credential
 * version at that sign-in and the issue time, with the first AUTH_SECRET (any listed one
 * verifies, so a rotation keeps devices known). The email is not in the cookie; only a sign-in
 * that types the same email can be matched to it. It lets its holder past the per-email lock,
 * never past the per-address or per-(email, address) limits; and only while the account's
 * credential version is still the one it was issued under: a password change or reset, an
 * address change or a lock ends the trust every earlier sign-in earned (an intruder who signed
 * in once does not keep skipping the per-account limit against the new password).
 */
export function createDeviceCookies(secrets: readonly string[]) {
  const [current] = secrets;
  if (current === undefined) throw new Error('device cookies need a secret');
  return {
    issue(email: string, credentialVersion: number, nowMs: number): string {
      const issuedAtSeconds = Math.floor(nowMs / 1000);
      const tag = mac(current, email, credentialVersion, issuedAtSeconds).toString('base64url');
      return `${issuedAtSeconds}.${credentialVersion}.${tag}`;
    },

    /**
     * The credential version `value` was issued under, when it was issued here for `email`
     * within the last year; else null. The caller compares it with the account's.
     */
    verify(value: string, email: string, nowMs: number): number | null {
      const match = /^(\d{1,12})\.(\d{1,9})\.([A-Za-z0-9_-]{43})$/.exec(value);
      if (match === null) return null;
      const issuedAtSeconds = Number(match[1]);
      const credentialVersion = Number(match[2]);
      const ageSeconds = nowMs / 1000 - issuedAtSeconds;
      // A little slack for clocks that differ between instances.
      if (ageSeconds > deviceCookieMaxAgeSeconds || ageSeconds < -300) return null;
      const given = Buffer.from(match[3] as string, 'base64url');
      const known = secrets.some((secret) =>
        timingSafeEqual(given, mac(secret, email, credentialVersion, issuedAtSeconds)),
      );
      return known ? credentialVersion : null;
    },
  };
}

export type DeviceCookies = ReturnType<typeof createDeviceCookies>;
