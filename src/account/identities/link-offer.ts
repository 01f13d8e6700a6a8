import { createHash } from 'node:crypto';
import type { SignedInBrowser } from '../../auth/way-in.js';
import { parseCookies } from '../../auth/cookies/cookies.js';
import type { IdentityLinkPorts, ProviderNames } from './identity-links.js';
import { linkIn } from './identity-links.js';
import { linkOfferTtlSeconds, takeOffer } from './identity-store.js';
import type { UserStore } from '../../users/store.js';

/*
 * The offer an unknown identity leaves in the browser it signed in from, when its address
 * belongs to an account (./provider-sign-in.ts): an HttpOnly cookie under /api/auth for ten
 * minutes, `__Secure-` over https. The next sign-in of that browser to that account (its
 * password, a passkey, the second step) links the identity; a sign-in to another account leaves
 * it, and the cookie goes either way.
 */

const cookieName = 'gatehouse.identity-offer';
const cookiePath = '/api/auth';

export const offerCookieName = (secure: boolean) =>
  secure ? `__Secure-${cookieName}` : cookieName;

export function offerSetCookie(token: string, secure: boolean): string {
  const maxAge = token === '' ? 0 : linkOfferTtlSeconds;
  return `${offerCookieName(secure)}=${token}; Path=${cookiePath}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/**
 * A link started from the account page (`intent=link` beside Auth.js's fields): for ten minutes
 * the browser holds the digest of the session that asked, and only a callback in that session
 * links a new identity to it at once. A provider's button on the sign-in page carries no intent:
 * there it signs in, as someone else if need be, and never links to whoever was signed in.
 */
const intentName = 'gatehouse.identity-link';

export const intentCookieName = (secure: boolean) =>
  secure ? `__Secure-${intentName}` : intentName;

export const sessionDigest = (sessionId: string) =>
  createHash('sha256').update(`link:${sessionId}`).digest('base64url');

export function intentSetCookie(sessionId: string | null, secure: boolean): string {
  const value = sessionId === null ? '' : sessionDigest(sessionId);
  const maxAge = sessionId === null ? 0 : linkOfferTtlSeconds;
  return `${intentCookieName(secure)}=${value}; Path=${cookiePath}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** Whether this browser asked, from `sessionId`, to link the identity it signs in with. */
export function intendsLink(cookieHeader: string | undefined, secure: boolean, sessionId: string) {
  return parseCookies(cookieHeader).get(intentCookieName(secure)) === sessionDigest(sessionId);
}

/** The offer this browser holds, if any. */
export function heldOffer(cookieHeader: string | undefined, secure: boolean): string | undefined {
  const token = parseCookies(cookieHeader).get(offerCookieName(secure));
  return token === undefined || token === '' || token.length > 128 ? undefined : token;
}

export interface OfferTakerDeps extends IdentityLinkPorts {
  users: Pick<UserStore, 'findById'>;
  names: ProviderNames;
  log: {
    info(fields: object, message: string): void;
    error(fields: object, message: string): void;
  };
}

/**
 * After a sign-in succeeded: the offer this browser holds, taken and linked if it was made to
 * the account that signed in. A failure here is logged and leaves the sign-in as it is (the
 * person can link from the account page); the cookie is cleared either way.
 */
export function createOfferTaker(deps: OfferTakerDeps) {
  return async function takeHeldOffer(signedIn: SignedInBrowser): Promise<readonly string[]> {
    const token = heldOffer(signedIn.request.headers.cookie, signedIn.secure);
    if (token === undefined) return [];
    const clear = [offerSetCookie('', signedIn.secure)];
    try {
      const user = await deps.users.findById(signedIn.userId);
      if (user === null) return clear;
      const linked = await deps.db.transaction().execute(async (trx) => {
        const offer = await takeOffer(trx, token, user.id, deps.now());
        if (offer === null) return null;
        const client = {
          ip: signedIn.request.ip,
          device: signedIn.request.headers['user-agent'] ?? '',
          origin: signedIn.origin,
        };
        return { provider: offer.provider, outcome: await linkIn(trx, deps, user, offer, client) };
      });
      if (linked !== null)
        deps.log.info({ userId: user.id, ...linked }, 'identity offered at sign-in: linked');
    } catch (error) {
      deps.log.error({ err: error, userId: signedIn.userId }, 'identity offer not taken');
    }
    return clear;
  };
}
