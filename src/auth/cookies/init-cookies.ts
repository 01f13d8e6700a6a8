import { randomBytes } from 'node:crypto';
import type { AuthCookieNames } from './cookie-names.js';
import { settleCallbackUrl } from './callback-url.js';
import { serializeCookie } from './cookies.js';
import { readCache } from '../../sessions/caches.js';
import { csrfPairHash } from './csrf-pair.js';

/** What Auth.js's init() settles for a request: the CSRF token, the cookies to set, the callback URL. */
export interface InitCookies {
  csrfToken: string;
  /** A new double-submit cookie unless the one held verifies; the callback-url cookie if it changed. */
  set: string[];
  callbackUrl: string;
}

/**
 * What Auth.js reads of a CSRF cookie: `token|hash`, anything after a second `|` ignored (it
 * splits on `|` and takes two), so a pair with any tail shares the pair's cache entry.
 */
function csrfPairOf(held: string): string {
  const second = held.indexOf('|', held.indexOf('|') + 1);
  return second === -1 ? held : held.slice(0, second);
}

/**
 * The cookies Auth.js's init() sets on every request, computed as it does: keep a CSRF cookie
 * whose hash verifies, else make a new token; settle the callback URL (a parameter, else the
 * cookie, else the origin) and set its cookie when it changed. For the reads answered without
 * Auth.js (src/auth/session/session-read.ts) and the CSRF token the pages print (src/auth/bridge/page-csrf.ts).
 */
export function createInitCookies(secrets: readonly string[]) {
  const csrfHash = csrfPairHash(secrets);
  // A browser repeats the same cookies on every read: remember CSRF cookies already verified
  // (a pure function of the cookie and the secrets), so a repeat costs a Map lookup. A cookie
  // is up to a header's size: the cache is bounded by bytes as well as by entries
  // (src/sessions/caches.ts).
  const verifiedCsrf = readCache<string, string>(
    'verifiedCsrf',
    (pair, token) => pair.length + token.length,
  );
  // And the callback-url cookie it holds, settled against an origin (a pure function of the
  // two: a URL parse per read otherwise). `null` remembers an unusable one.
  const settled = readCache<string, string | null>(
    'settledCallbacks',
    (key, url) => key.length + (url?.length ?? 0),
  );
  const settle = (asked: string, origin: string): string | undefined => {
    const key = `${origin} ${asked}`;
    let url = settled.get(key);
    if (url === undefined) {
      url = settleCallbackUrl(asked, origin) ?? null;
      settled.set(key, url);
    }
    return url ?? undefined;
  };

  /**
   * `callbackParam` is the request's usable `callbackUrl` parameter, if any; an unusable cookie
   * counts as absent, as in the route (src/auth/cookies/callback-url.ts).
   */
  return function initCookies(
    cookies: Map<string, string>,
    names: AuthCookieNames,
    origin: string,
    secure: boolean,
    callbackParam?: string,
  ): InitCookies {
    const set: string[] = [];
    let csrfToken: string | undefined;
    const held = cookies.get(names.csrf);
    if (held !== undefined && held !== '') {
      const pair = csrfPairOf(held);
      csrfToken = verifiedCsrf.get(pair);
      if (csrfToken === undefined) {
        const [token = '', hash] = pair.split('|');
        if (hash === csrfHash(token)) {
          csrfToken = token;
          verifiedCsrf.set(pair, token);
        }
      }
    }
    if (csrfToken === undefined) {
      csrfToken = randomBytes(32).toString('hex');
      set.push(serializeCookie(names.csrf, `${csrfToken}|${csrfHash(csrfToken)}`, { secure }));
    }
    const callback = cookies.get(names.callbackUrl);
    // Auth.js's default redirect callback.
    const asked = callbackParam === undefined || callbackParam === '' ? callback : callbackParam;
    const callbackUrl =
      asked === undefined || asked === '' ? origin : (settle(asked, origin) ?? origin);
    if (callbackUrl !== callback) {
      set.push(serializeCookie(names.callbackUrl, callbackUrl, { secure }));
    }
    return { csrfToken, set, callbackUrl };
  };
}

export type InitCookiesFor = ReturnType<typeof createInitCookies>;
