import { parseCookies } from '../../auth/cookies/cookies.js';

/*
 * The address a browser asked a sign-in mail for, kept for the pages that ask for its code (the
 * "check your inbox" page, the sign-in page after a wrong code), so the person types only the
 * code. Never in a URL (access logs, history): an HttpOnly cookie under /api/auth, SameSite=Lax,
 * `__Secure-` over https, as long as the mail's code lives; set only for a browser's own form
 * post (an Auth.js client's answer stays Auth.js's, the same bytes for every address), cleared
 * by the sign-in it leads to. It holds what this browser typed, nothing the service looked up.
 */

const cookieName = 'gatehouse.email-signin';
const cookiePath = '/api/auth';
// The longest address the service takes (src/users/email.ts) is shorter still.
const valueMaxLength = 1024;

const nameFor = (secure: boolean) => (secure ? `__Secure-${cookieName}` : cookieName);

/** The Set-Cookie line keeping `email` (normalised) for `maxAgeSeconds`; 0 clears it. */
export function askedAddressCookie(email: string, maxAgeSeconds: number, secure: boolean) {
  const value = maxAgeSeconds === 0 ? '' : encodeURIComponent(email);
  return `${nameFor(secure)}=${value}; Path=${cookiePath}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** The address this browser asked a sign-in mail for, if it still holds it (decoded). */
export function askedAddress(cookieHeader: string | undefined, secure: boolean) {
  const held = parseCookies(cookieHeader).get(nameFor(secure));
  return held === undefined || held === '' || held.length > valueMaxLength ? undefined : held;
}
