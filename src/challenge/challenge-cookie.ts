/*
 * The sign-in challenge as a browser holds it (./challenge-store.ts keeps its digest): HttpOnly
 * (no script reads it), SameSite=Lax, sent only under Auth.js's base path (the credentials
 * callback and the sign-in page that asks for the next step), gone after five minutes or once a
 * sign-in succeeds. Over https `__Secure-`, so no plain-http sibling can plant one. The auth
 * wing sets and clears it, the sign-in page asks whether it is held, the ways in read it.
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

/** Whether a Cookie header holds a challenge (its value is checked where it is used). */
export function holdsChallenge(cookieHeader: string | undefined, secure: boolean): boolean {
  const name = challengeCookieName(secure);
  return (cookieHeader ?? '').split(';').some((pair) => {
    const [key, value] = pair.split('=', 2);
    return key?.trim() === name && value !== undefined && value.trim() !== '';
  });
}
