import type { FastifyRequest } from 'fastify';
import { authBasePath } from './auth-config.js';
import type { AuthjsBridge, PageCsrfResult } from './authjs-bridge.js';
import { withUsableCallbackUrls } from '../cookies/callback-url.js';
import { authCookieNames } from '../cookies/cookie-names.js';
import type { FastReader } from '../session/session-read.js';

export interface PageCsrfDeps {
  /** Session-read's fast branch (fast paths on): Auth.js's init() without Auth.js. */
  fast: FastReader | undefined;
  /** Auth.js's own CSRF action, asked when fast paths are off. */
  bridge: Pick<AuthjsBridge, 'csrfAction'>;
}

/**
 * The CSRF token a sign-in or sign-out page prints for this browser, the cookies to set with
 * the page, and the callback URL settled on (`query`'s `callbackUrl`, else the held cookie, else
 * the origin): exactly what Auth.js's CSRF action gives, the pair a form post is checked
 * against. The pages receive it (src/pages/signin/auth-pages.ts); they never ask Auth.js themselves.
 */
export function createPageCsrf(deps: PageCsrfDeps) {
  return function pageCsrf(
    request: FastifyRequest,
    site: { origin: string; secure: boolean },
    query: string,
  ): Promise<PageCsrfResult> {
    // The session cookie's prefix does not change the callback-url cookie's name.
    const name = authCookieNames(site.secure, '__Secure-').callbackUrl;
    // An unusable callbackUrl (query or cookie) counts as absent, as on every auth route.
    const usable = withUsableCallbackUrls(
      { search: query, cookie: request.headers.cookie, body: undefined, contentType: null },
      site.origin,
      name,
    );
    const url = `${site.origin}${authBasePath}/csrf${usable.search}`;
    if (deps.fast === undefined) {
      return deps.bridge.csrfAction(request, site, url, usable.cookie);
    }
    // The parameter as Auth.js reads it: the URL's last `callbackUrl`.
    const param = new URL(url).searchParams.getAll('callbackUrl').at(-1);
    const init = deps.fast.csrfCookies(usable.cookie, site.origin, site.secure, param);
    return Promise.resolve({
      ok: true,
      csrfToken: init.csrfToken,
      cookies: init.set,
      callbackUrl: init.callbackUrl,
    });
  };
}
