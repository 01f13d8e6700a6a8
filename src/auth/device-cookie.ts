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
function mac(secret: string, email: string, issuedAtSeconds: number): Buffer {
  return createHmac('sha256', secret)
    .update(`gatehouse device cookie\0${email}\0${issuedAtSeconds}`)
    .digest();
}

/**
 * Proof that this browser signed in to an account here before: `<issued-at>.<HMAC>` over the
 * normalised email and the issue time, with the first AUTH_SECRET (any listed one verifies, so
 * a rotation keeps devices known). The email is not in the cookie; only a sign-in that types
 * the same email can be matched to it. It lets its holder past the per-email lock, never past
 * the per-address or per-(email, address) limits.
 */
export function createDeviceCookies(secrets: readonly string[]) {
  const [current] = secrets;
  if (current === undefined) throw new Error('device cookies need a secret');
  return {
    issue(email: string, nowMs: number): string {
      const issuedAtSeconds = Math.floor(nowMs / 1000);
      return `${issuedAtSeconds}.${mac(current, email, issuedAtSeconds).toString('base64url')}`;
    },

    /** Whether `value` was issued here for `email`, within the last year. */
    verify(value: string, email: string, nowMs: number): boolean {
      const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
      if (match === null) return false;
      const issuedAtSeconds = Number(match[1]);
      const ageSeconds = nowMs / 1000 - issuedAtSeconds;
      // A little slack for clocks that differ between instances.
      if (ageSeconds > deviceCookieMaxAgeSeconds || ageSeconds < -300) return false;
      const given = Buffer.from(match[2] as string, 'base64url');
      return secrets.some((secret) => timingSafeEqual(given, mac(secret, email, issuedAtSeconds)));
    },
  };
}

export type DeviceCookies = ReturnType<typeof createDeviceCookies>;
