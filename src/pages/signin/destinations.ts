import { judgeCallbackUrl } from '../../http/callback-target.js';
import { signedOutParam } from '../notices.js';

/**
 * A URL on this origin, in the form a browser would send it (quotes and angle brackets
 * percent-encoded: what the page prints is the URL, not the text that asked for it); the bare
 * origin stays as Auth.js writes it. Undefined for anything else, and for a URL on this origin
 * whose path a reader could take elsewhere (`//host`, `/\host`, `/%2F%2Fhost`: the rule every
 * callback follows, src/http/callback-target.ts).
 */
export function sameOrigin(candidate: string | undefined, origin: string): string | undefined {
  if (candidate === undefined) return undefined;
  if (candidate === origin) return origin;
  const target = judgeCallbackUrl(candidate, origin);
  return target.kind === 'here' ? new URL(target.url).href : undefined;
}

/** SIGNED_IN_URL as an absolute URL (a path is on the public origin). */
export function signedInTarget(signedInUrl: string, origin: string): string {
  return new URL(signedInUrl, origin).href;
}

/**
 * Where the sign-in form sends people: Auth.js's choice, but never back to a page of the
 * service itself. After the sign-out page, Auth.js's callback-url cookie names the sign-in
 * page's "signed out" notice; signing in from there must not land on it again. Where Auth.js
 * fell back to the origin (no callbackUrl was given), SIGNED_IN_URL if set: `/` would send a
 * signed-in visitor there anyway, and this saves the hop.
 */
export function signInDestination(
  candidate: string | undefined,
  origin: string,
  basePath: string,
  signedInUrl: string | undefined,
): string {
  const url = sameOrigin(candidate, origin);
  const fallback = signedInUrl === undefined ? origin : signedInTarget(signedInUrl, origin);
  if (url === undefined || url === origin) return fallback;
  if (url === `${origin}/` && signedInUrl !== undefined) return fallback;
  const path = new URL(url).pathname;
  return path === basePath || path.startsWith(`${basePath}/`) ? fallback : url;
}

/**
 * Where the sign-out form sends people: where the page was asked to send them (as Auth.js
 * settled it), else the sign-in page with its "signed out" notice.
 */
export function signOutDestination(
  settled: string | undefined,
  origin: string,
  basePath: string,
): string {
  return sameOrigin(settled, origin) ?? `${origin}${basePath}/signin?${signedOutParam}=1`;
}
