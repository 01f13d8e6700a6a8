/** The session cookie's prefix over https (`SESSION_COOKIE_PREFIX`). */
export type SessionCookiePrefix = '__Secure-' | '__Host-';

export interface AuthCookieNames {
  session: string;
  csrf: string;
  callbackUrl: string;
}

/**
 * Auth.js's cookie names, so an unchanged Auth.js / next-auth server reads the session cookie
 * (the name is also the token's key-derivation salt). Over https the session cookie is
 * `__Secure-authjs.session-token` by default; `__Host-` is the stricter opt-in (no sibling
 * subdomain can plant one), and then every reader must name the cookie.
 */
export function authCookieNames(secure: boolean, prefix: SessionCookiePrefix): AuthCookieNames {
  return secure
    ? {
        session: `${prefix}authjs.session-token`,
        csrf: '__Host-authjs.csrf-token',
        callbackUrl: '__Secure-authjs.callback-url',
      }
    : {
        session: 'authjs.session-token',
        csrf: 'authjs.csrf-token',
        callbackUrl: 'authjs.callback-url',
      };
}
