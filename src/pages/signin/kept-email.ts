/*
 * The email of a failed sign-in, kept for the sign-in page that follows. Auth.js answers a
 * failed form post with a redirect to `/api/auth/signin?error=CredentialsSignin&code=credentials`;
 * the email must not ride in that URL (it would land in access logs, proxies' logs and the
 * browser's history). It rides in a cookie instead: HttpOnly (no script reads it), SameSite=Lax,
 * sent only to the sign-in page's path, gone after five minutes or at the next successful
 * sign-in. Only a browser's own form post sets it; Auth.js clients' answers are untouched.
 */

const cookieName = 'gatehouse.signin-email';
/** Long enough to look up a password and try again; short enough not to linger on a shared screen. */
export const keptEmailMaxAgeSeconds = 300;
// Emails are at most 254 characters (RFC 5321); anything longer was never going to sign in.
const emailMaxLength = 254;

/** Over https, `__Secure-`: no plain-http page of a sibling can plant one. */
export function keptEmailCookieName(secure: boolean): string {
  return secure ? `__Secure-${cookieName}` : cookieName;
}

function attributes(path: string, maxAgeSeconds: number, secure: boolean): string {
  return `; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** Whether a typed email is worth keeping: not empty, not too long, no control characters. */
function keepable(email: string | undefined): email is string {
  return (
    email !== undefined &&
    email.trim() !== '' &&
    email.length <= emailMaxLength &&
    !/\p{Cc}/u.test(email)
  );
}

/** The Set-Cookie line keeping `email` for the sign-in page at `path`, or undefined. */
export function keepEmail(
  email: string | undefined,
  path: string,
  secure: boolean,
): string | undefined {
  if (!keepable(email)) return undefined;
  const value = encodeURIComponent(email);
  return `${keptEmailCookieName(secure)}=${value}${attributes(path, keptEmailMaxAgeSeconds, secure)}`;
}

/** The Set-Cookie line that forgets the kept email. */
export function forgetEmail(path: string, secure: boolean): string {
  return `${keptEmailCookieName(secure)}=${attributes(path, 0, secure)}`;
}

/** The kept email in a Cookie header, or undefined. */
export function readKeptEmail(
  cookieHeader: string | undefined,
  secure: boolean,
): string | undefined {
  if (cookieHeader === undefined) return undefined;
  const name = keptEmailCookieName(secure);
  for (const pair of cookieHeader.split(';')) {
    const at = pair.indexOf('=');
    if (at === -1 || pair.slice(0, at).trim() !== name) continue;
    try {
      const email = decodeURIComponent(pair.slice(at + 1).trim());
      return keepable(email) ? email : undefined;
    } catch {
      // Not a value this service wrote: nothing kept.
      return undefined;
    }
  }
  return undefined;
}
