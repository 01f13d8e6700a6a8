import type { FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.js';

export interface LoginCsrfGuardOptions {
  /** The paths that sign in: held to this origin, not only to this site. */
  signInPaths: ReadonlySet<string>;
  /** This service's public origin for a request (src/auth/request-site.ts). */
  originOf: (request: FastifyRequest) => string;
  /** Told when a sign-in is refused as cross-site (its sign-in outcome). */
  onSignInRefused: () => void;
}

/**
 * Login CSRF: a cross-site page could post its own valid token pair and sign the victim into
 * the attacker's account. Browsers say where a request comes from: no POST to /api/auth may
 * come from another site, and a sign-in must come from this origin (or be typed: `none`), never
 * a sibling site. Throws `cross_site` (403); Auth.js's own CSRF token check still follows.
 */
export function loginCsrfGuard(options: LoginCsrfGuardOptions) {
  return function assertSameOrigin(request: FastifyRequest, path: string): void {
    const signingIn = options.signInPaths.has(path);
    const crossSite = () => {
      if (signingIn) options.onSignInRefused();
      return new HttpError('cross_site');
    };
    const fetchSite = request.headers['sec-fetch-site']?.toLowerCase();
    if (fetchSite === 'cross-site') throw crossSite();
    if (!signingIn) return;
    if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
      throw crossSite();
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin.toLowerCase() !== options.originOf(request)) {
      throw crossSite();
    }
  };
}
