import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { authCookieNames } from '../auth/cookies/cookie-names.js';
import { parseCookies } from '../auth/cookies/cookies.js';
import { csrfPairHash } from '../auth/cookies/csrf-pair.js';
import { HttpError } from '../http/errors.js';

/** Why a POST was refused as CSRF: it came from another site, or its token pair did not hold. */
export type CsrfRefusalReason = 'cross_site' | 'token';

/**
 * A 403 `csrf` (the JSON answer is the same for every reason) that says which check failed, so
 * a page can explain it: a form from another site, or one that expired (no or a stale token).
 */
export class CsrfRefusal extends HttpError {
  declare readonly reason: CsrfRefusalReason;
  constructor(
    reason: CsrfRefusalReason,
    /** The request's `Origin`, when it sent one. */
    readonly requestOrigin: string | undefined,
  ) {
    super('csrf', {}, undefined, { reason });
  }
}

const equal = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/**
 * Every POST to /api/account carries Auth.js's CSRF token (field `csrfToken` or header
 * `X-CSRF-Token`) with its cookie, checked as Auth.js checks it (`createCSRFToken` in
 * @auth/core: the cookie is `token|hash`, the hash SHA-256 of the token and the secret setting,
 * which Auth.js stringifies, so several secrets join with commas), and never comes from another
 * site (`Origin` foreign, or `Sec-Fetch-Site: cross-site`). Any failure: 403 `csrf`
 * (a CsrfRefusal naming which).
 */
export function createCsrfGuard(deps: {
  secrets: readonly string[];
  originOf: (request: FastifyRequest) => string;
  secureOf: (request: FastifyRequest) => boolean;
}) {
  const hashOf = csrfPairHash(deps.secrets);
  return function assertCsrf(request: FastifyRequest, body: Record<string, unknown>): void {
    const origin = request.headers.origin;
    if (request.headers['sec-fetch-site']?.toLowerCase() === 'cross-site') {
      throw new CsrfRefusal('cross_site', origin);
    }
    if (origin !== undefined && origin.toLowerCase() !== deps.originOf(request)) {
      throw new CsrfRefusal('cross_site', origin);
    }
    const header = request.headers['x-csrf-token'];
    const sent = typeof header === 'string' ? header : body.csrfToken;
    const name = authCookieNames(deps.secureOf(request), '__Secure-').csrf;
    const held = parseCookies(request.headers.cookie).get(name);
    if (typeof sent !== 'string' || sent === '' || held === undefined) {
      throw new CsrfRefusal('token', origin);
    }
    // Auth.js's split: the first two `|`-separated parts, anything after ignored.
    const [token = '', hash = ''] = held.split('|');
    if (!equal(hash, hashOf(token)) || !equal(token, sent)) throw new CsrfRefusal('token', origin);
  };
}

/**
 * The CSRF token for an account page's form: Auth.js's double-submit pair (`token|hash` in its
 * CSRF cookie, the hash keyed by the secrets), the one every account POST is checked against
 * (createCsrfGuard above). The browser's own when its cookie verifies; else a fresh pair and the
 * cookie to set with the page.
 */
export function createFormCsrf(
  authSecrets: readonly string[],
  secureOf: (request: FastifyRequest) => boolean,
) {
  const hashOf = csrfPairHash(authSecrets);
  return (request: FastifyRequest): { token: string; cookie?: string } => {
    const name = authCookieNames(secureOf(request), '__Secure-').csrf;
    const held = parseCookies(request.headers.cookie).get(name);
    const [token = '', hash = ''] = (held ?? '').split('|');
    if (token !== '' && equal(hash, hashOf(token))) return { token };
    const fresh = randomBytes(32).toString('hex');
    const secure = secureOf(request) ? '; Secure' : '';
    const value = encodeURIComponent(`${fresh}|${hashOf(fresh)}`);
    return { token: fresh, cookie: `${name}=${value}; Path=/; HttpOnly; SameSite=Lax${secure}` };
  };
}
