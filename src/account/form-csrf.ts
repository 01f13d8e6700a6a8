import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { authCookieNames } from '../auth/cookies/cookie-names.js';
import { parseCookies } from '../auth/cookies/cookies.js';
import { csrfPairHash } from '../auth/cookies/csrf-pair.js';

const equal = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The CSRF token for an account page's form: Auth.js's double-submit pair (`token|hash` in its
 * CSRF cookie, the hash keyed by the secrets), the one every account POST is checked against
 * (src/account/csrf-guard.ts). The browser's own when its cookie verifies; else a fresh pair
 * and the cookie to set with the page.
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
