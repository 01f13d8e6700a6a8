import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authCookieNames } from '../auth/cookie-names.js';
import { parseCookies } from '../auth/cookies.js';
import { isSecure, originOf } from '../auth/request-site.js';
import { pageDefaults, type PageSettings } from '../config/page-settings.js';
import type { HttpError } from '../http/errors.js';
import { paletteFor } from '../pages/colour.js';
import type { PageShell } from '../pages/layout.js';
import { pagePolicy } from '../pages/page-csp.js';
import { pageStyle } from '../pages/page-style.js';
import { createCsrfGuard } from './csrf-guard.js';

/*
 * What a page reached from a mailed link shares with the reset and lock pages (reset-pages.ts):
 * the sign-in page's look and CSP, `Referrer-Policy: no-referrer` (the URL carries a secret),
 * the CSRF check that takes the browser's `Origin: null` under no-referrer only together with
 * `Sec-Fetch-Site: same-origin`, and the Auth.js double-submit CSRF pair, made here when the
 * browser holds none.
 */

export interface LinkPageSettings {
  authSecrets: readonly string[];
  authUrl: string | undefined;
  page?: PageSettings | undefined;
}

const equal = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export function createLinkPageKit(settings: LinkPageSettings) {
  const page = settings.page ?? pageDefaults;
  const style = pageStyle(paletteFor(page.accentColor));
  const shell: PageShell = {
    productName: page.productName,
    logoUrl: page.logoUrl,
    style,
    basePath: '/api/auth',
  };
  const policy = pagePolicy(style, page.logoUrl);
  const secret = settings.authSecrets.join(',');
  const hashOf = (token: string) => createHash('sha256').update(`${token}${secret}`).digest('hex');
  const secureOf = (request: FastifyRequest) => isSecure(request, settings.authUrl);
  const assertCsrf = createCsrfGuard({
    secrets: settings.authSecrets,
    originOf: (request) =>
      request.headers.origin === 'null' && request.headers['sec-fetch-site'] === 'same-origin'
        ? 'null'
        : originOf(request, settings.authUrl),
    secureOf,
  });

  /** The browser's CSRF token, and the cookie to set when it held no valid one. */
  const csrfFor = (request: FastifyRequest): { token: string; cookie?: string } => {
    const name = authCookieNames(secureOf(request), '__Secure-').csrf;
    const held = parseCookies(request.headers.cookie).get(name);
    const [token = '', hash = ''] = (held ?? '').split('|');
    if (token !== '' && equal(hash, hashOf(token))) return { token };
    const fresh = randomBytes(32).toString('hex');
    const secure = secureOf(request) ? '; Secure' : '';
    const value = encodeURIComponent(`${fresh}|${hashOf(fresh)}`);
    return { token: fresh, cookie: `${name}=${value}; Path=/; HttpOnly; SameSite=Lax${secure}` };
  };

  /** An HTML answer with the pages' CSP and no referrer; `cookies` as Set-Cookie lines. */
  const send = (
    reply: FastifyReply,
    status: number,
    html: string,
    cookies: (string | undefined)[],
    headers: Record<string, string> = {},
  ) => {
    reply.code(status).headers({
      ...headers,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': policy,
      'referrer-policy': 'no-referrer',
    });
    const lines = cookies.filter((cookie): cookie is string => cookie !== undefined);
    if (lines.length > 0) reply.header('set-cookie', lines);
    return reply.send(html);
  };

  /** The Retry-After of a refusal, for the page's answer too. */
  const answerHeaders = (error: HttpError): Record<string, string> => {
    const retryAfter = error.headers['retry-after'];
    return retryAfter === undefined ? {} : { 'retry-after': retryAfter };
  };

  /** The `token` query parameter of a link, or undefined. */
  const tokenOf = (request: FastifyRequest): string | undefined =>
    new URLSearchParams(request.url.split('?')[1] ?? '').get('token') || undefined;

  return { shell, secureOf, assertCsrf, csrfFor, send, answerHeaders, tokenOf };
}
