import { Auth } from '@auth/core';
import type { FastifyRequest } from 'fastify';
import { authBasePath, type AuthConfigFor } from '../auth/auth-config.js';
import { authCookieNames } from '../auth/cookie-names.js';
import { withUsableCallbackUrls } from '../auth/callback-url.js';
import { parseCookies } from '../auth/cookies.js';

/** Where a page request stands, as the auth routes see it. */
export interface PageSite {
  /** The public origin (AUTH_URL's, else the request's), exactly as Auth.js is given it. */
  origin: string;
  secure: boolean;
  /** Auth.js's configuration for this request's scheme. */
  authConfig: AuthConfigFor;
}

export type PageCsrf =
  | { ok: true; csrfToken: string; cookies: string[]; callbackUrl: string }
  | { ok: false; response: Response };

function setCookieValue(cookies: string[], name: string): string | undefined {
  const line = cookies.find((cookie) => cookie.startsWith(`${name}=`));
  if (line === undefined) return undefined;
  const end = line.indexOf(';');
  const raw = line.slice(name.length + 1, end === -1 ? undefined : end);
  try {
    return decodeURIComponent(raw);
  } catch {
    // Auth.js encodes what it sets; an undecodable value is not one of its.
    return undefined;
  }
}

/**
 * Auth.js's own CSRF action, run for this browser: the token Auth.js's built-in page would have
 * printed, the cookies it would have set (a new double-submit cookie unless the one held
 * verifies; the callback-url cookie), and the callback URL it settled on (`query`'s
 * `callbackUrl`, else the held cookie, else the origin). Asking Auth.js keeps one definition of
 * a valid token in both modes. Anything but a token comes back for the caller to pass on
 * unchanged.
 */
export async function pageCsrf(
  request: FastifyRequest,
  site: PageSite,
  query: string,
): Promise<PageCsrf> {
  const held = request.headers.cookie;
  // The session cookie's prefix does not change the callback-url cookie's name.
  const name = authCookieNames(site.secure, '__Secure-').callbackUrl;
  // An unusable callbackUrl (query or cookie) counts as absent, as on every auth route.
  const usable = withUsableCallbackUrls(
    { search: query, cookie: held, body: undefined, contentType: null },
    site.origin,
    name,
  );
  const headers = new Headers();
  if (usable.cookie !== undefined) headers.set('cookie', usable.cookie);
  const authRequest = new Request(`${site.origin}${authBasePath}/csrf${usable.search}`, {
    headers,
  });
  const response = await Auth(
    authRequest,
    site.authConfig({ clientIp: request.ip, previousSessionToken: undefined }),
  );
  if (response.status !== 200) return { ok: false, response };
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  const cookies = response.headers.getSetCookie();
  // Auth.js sets the callback-url cookie whenever its choice differs from the one held.
  const callbackUrl =
    setCookieValue(cookies, name) ?? parseCookies(usable.cookie).get(name) ?? site.origin;
  return { ok: true, csrfToken, cookies, callbackUrl };
}
