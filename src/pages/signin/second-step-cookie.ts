/*
 * Beside the kept email (kept-email.ts): a cookie the sign-in page reads and the auth wing sets.
 * The second step's challenge as a browser holds it (src/account/totp/challenges.ts): HttpOnly
 * (no script reads it), SameSite=Lax, sent only under Auth.js's base path (the credentials
 * callback and the sign-in page that asks for the code), gone after five minutes or once a
 * sign-in succeeds. Over https `__Secure-`, so no plain-http sibling can plant one.
 */

const cookieName = 'gatehouse.second-step';

/** Five minutes: time to find the phone, not to leave a proof lying on a shared screen. */
export const challengeTtlSeconds = 300;

export function challengeCookieName(secure: boolean): string {
  return secure ? `__Secure-${cookieName}` : cookieName;
}

export function challengeSetCookie(
  value: string,
  path: string,
  maxAgeSeconds: number,
  secure: boolean,
): string {
  return `${challengeCookieName(secure)}=${value}; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}
