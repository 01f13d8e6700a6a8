import type { FastifyRequest } from 'fastify';
import { HttpError } from '../../http/errors.js';

export interface LoginCsrfGuardOptions {
  /** The paths that sign in: held to this origin, not only to this site. */
  signInPaths: ReadonlySet<string>;
  /** This service's public origin for a request (src/auth/request/request-site.ts). */
  originOf: (request: FastifyRequest) => string;
  /** Told when a sign-in is refused as cross-site (its sign-in outcome). */
  onSignInRefused: () => void;
}

/** What a cross-site refusal was about: what the request said, and what it was compared with. */
export interface CrossSiteRefusal {
  /** The request's `Origin` (cut to a readable length), if it sent one. */
  requestOrigin: string | undefined;
  /** The request's `Sec-Fetch-Site`, if it sent one. */
  fetchSite: string | undefined;
  /** The public origin the request was compared with. */
  publicOrigin: string;
  /** The AUTH_URL that would make the request's origin this service's own. */
  suggestedAuthUrl: string;
}

// An Origin header may be as long as a header; a log line or a page needs its start only.
const shownOriginMaxLength = 200;
// The example AUTH_URL when the request names no usable origin (AUTH_URL's own example).
const exampleAuthUrl = 'https://auth.example.com';

/** The request's Origin when it is an http(s) origin a browser would send, else undefined. */
function usableOrigin(origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  try {
    const url = new URL(origin);
    const ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === origin;
    return ok ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The AUTH_URL that would make a request from `origin` this service's own (else an example). */
export function suggestedAuthUrl(origin: string | undefined): string {
  return usableOrigin(origin) ?? exampleAuthUrl;
}

/** The refusal's reason and the setting to change, in one sentence for logs and JSON callers. */
export function explainCrossSite(refusal: CrossSiteRefusal): string {
  const { requestOrigin, fetchSite, publicOrigin } = refusal;
  const from =
    requestOrigin !== undefined && requestOrigin.toLowerCase() !== publicOrigin
      ? `Origin ${requestOrigin} is not this service's public origin ${publicOrigin}`
      : `Sec-Fetch-Site is ${fetchSite ?? 'absent'}, not same-origin, for this service's public origin ${publicOrigin}`;
  // `Origin: null` is not another origin to configure but a page that withheld its own.
  const fix =
    requestOrigin === 'null'
      ? "If this is your own app's page, serve it with Referrer-Policy: same-origin (or strict-origin-when-cross-origin) so the browser sends its origin, and set AUTH_URL to that origin."
      : `If this is your own app, set AUTH_URL to the origin the browser uses, e.g. AUTH_URL=${refusal.suggestedAuthUrl}.`;
  return `Cross-site requests cannot sign in or out: ${from}. ${fix}`;
}

/** A `cross_site` refusal that carries what it compared, for the log line and the page. */
export class CrossSiteError extends HttpError {
  constructor(readonly refusal: CrossSiteRefusal) {
    super('cross_site', {}, explainCrossSite(refusal));
  }
}

/**
 * Login CSRF: a cross-site page could post its own valid token pair and sign the victim into
 * the attacker's account. Browsers say where a request comes from: no POST to /api/auth may
 * come from another site, and a sign-in must come from this origin (or be typed: `none`), never
 * a sibling site. Throws CrossSiteError (403 `cross_site`) after one warning that names the
 * origins compared and the setting to change: the usual cause is not an attack but an app in
 * front of Gatehouse on another origin, without AUTH_URL. Auth.js's own CSRF token check
 * still follows.
 */
export function loginCsrfGuard(options: LoginCsrfGuardOptions) {
  return function assertSameOrigin(request: FastifyRequest, path: string): void {
    const signingIn = options.signInPaths.has(path);
    const fetchSite = request.headers['sec-fetch-site']?.toLowerCase();
    const origin = request.headers.origin;
    // The Host header may not make an origin (originOf throws 400): the refusal still stands.
    const publicOriginOf = () => {
      try {
        return options.originOf(request);
      } catch {
        return '(none: the Host header is not usable)';
      }
    };
    const crossSite = (publicOrigin: string) => {
      if (signingIn) options.onSignInRefused();
      const refusal: CrossSiteRefusal = {
        requestOrigin: origin?.slice(0, shownOriginMaxLength),
        fetchSite: fetchSite?.slice(0, shownOriginMaxLength),
        publicOrigin,
        suggestedAuthUrl: suggestedAuthUrl(origin),
      };
      const error = new CrossSiteError(refusal);
      request.log.warn(
        {
          path,
          origin: refusal.requestOrigin,
          secFetchSite: refusal.fetchSite,
          publicOrigin,
        },
        error.message,
      );
      return error;
    };
    if (fetchSite === 'cross-site') throw crossSite(publicOriginOf());
    if (!signingIn) return;
    if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
      throw crossSite(publicOriginOf());
    }
    if (origin === undefined) return;
    const publicOrigin = options.originOf(request);
    if (origin.toLowerCase() !== publicOrigin) throw crossSite(publicOrigin);
  };
}
