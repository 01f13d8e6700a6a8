import { createHash, randomBytes } from 'node:crypto';
import type { JweCodec } from './jwe-codec.js';
import { authCookieNames, type AuthCookieNames, type SessionCookiePrefix } from './cookie-names.js';
import { settleCallbackUrl } from './callback-url.js';
import { parseCookies, serializeCookie } from './cookies.js';
import { RecentCache } from '../util/recent-cache.js';
import { expClockToleranceSeconds, readClaims, type SessionClaims } from './session-claims.js';

export interface FastAnswer {
  headers: Record<string, string>;
  cookies: string[];
  body: string;
}

export interface FastReadDeps {
  secrets: readonly string[];
  session: { maxAgeSeconds: number; updateAgeSeconds: number; absoluteMaxAgeSeconds: number };
  codec: JweCodec;
  claims: SessionClaims;
  now: () => number;
  sessionCookiePrefix: SessionCookiePrefix;
}

const recentCapacity = 2048;

// Auth.js's SessionStore chunks values past 4096 - 160 bytes.
const maxUnchunkedTokenLength = 4096 - 160;

// Auth.js sends these on the session and CSRF answers alike.
const readHeaders = {
  'content-type': 'application/json',
  'cache-control': 'private, no-cache, no-store',
  expires: '0',
  pragma: 'no-cache',
};

/**
 * `GET /api/auth/session` and `GET /api/auth/csrf` answered without Auth.js's per-request
 * pipeline (Request objects, config set-up, WebCrypto digests), with the same configuration,
 * codec, claims check, body, headers and cookies. `undefined` means "not a case handled here
 * exactly": the caller hands the request to Auth.js unchanged. Differential tests pin the
 * equivalence (test/fast-read.test.ts).
 */
export function createFastReader(deps: FastReadDeps) {
  // Auth.js hashes the token with `${token}${options.secret}`: an array stringifies joined by commas.
  const csrfSecret = deps.secrets.join(',');
  const csrfHash = (token: string) =>
    createHash('sha256').update(`${token}${csrfSecret}`).digest('hex');
  // A browser repeats the same cookies on every read. Remember CSRF cookies already verified
  // (a pure function of the cookie and the secrets) and tokens already decrypted (expiry and
  // revocation are still checked on every read), so a repeat costs Map lookups, not crypto.
  const verifiedCsrf = new RecentCache<string, string>(recentCapacity);
  const decoded = new RecentCache<string, Record<string, unknown>>(recentCapacity);
  const decode = (token: string, salt: string): Record<string, unknown> | null => {
    const key = `${salt}\n${token}`;
    const hit = decoded.get(key);
    if (hit !== undefined) {
      // The codec checked exp against the clock when it decrypted; a cached token must too.
      const exp = hit.exp;
      return typeof exp === 'number' && exp + expClockToleranceSeconds > deps.now() / 1000
        ? hit
        : null;
    }
    const payload = deps.codec.decode({ token, secret: [...deps.secrets], salt });
    if (payload !== null) decoded.set(key, payload);
    return payload;
  };

  /** Auth.js's init(): keep a valid CSRF cookie, else make one; settle the callback-url cookie. */
  function initCookies(
    cookies: Map<string, string>,
    names: AuthCookieNames,
    origin: string,
    secure: boolean,
  ) {
    const set: string[] = [];
    let csrfToken: string | undefined;
    const held = cookies.get(names.csrf);
    if (held !== undefined && held !== '') {
      csrfToken = verifiedCsrf.get(held);
      if (csrfToken === undefined) {
        const [token = '', hash] = held.split('|');
        if (hash === csrfHash(token)) {
          csrfToken = token;
          verifiedCsrf.set(held, token);
        }
      }
    }
    if (csrfToken === undefined) {
      csrfToken = randomBytes(32).toString('hex');
      set.push(serializeCookie(names.csrf, `${csrfToken}|${csrfHash(csrfToken)}`, { secure }));
    }
    const callback = cookies.get(names.callbackUrl);
    // Auth.js's default redirect callback; an unusable value counts as absent, as in the route.
    const settled =
      callback === undefined || callback === ''
        ? origin
        : (settleCallbackUrl(callback, origin) ?? origin);
    if (settled !== callback) set.push(serializeCookie(names.callbackUrl, settled, { secure }));
    return { csrfToken, set };
  }

  return {
    csrf(cookieHeader: string | undefined, origin: string, secure: boolean): FastAnswer {
      const names = authCookieNames(secure, deps.sessionCookiePrefix);
      const init = initCookies(parseCookies(cookieHeader), names, origin, secure);
      return {
        headers: readHeaders,
        cookies: init.set,
        body: JSON.stringify({ csrfToken: init.csrfToken }),
      };
    },

    async session(
      cookieHeader: string | undefined,
      origin: string,
      secure: boolean,
    ): Promise<FastAnswer | undefined> {
      const names = authCookieNames(secure, deps.sessionCookiePrefix);
      const cookies = parseCookies(cookieHeader);
      const init = initCookies(cookies, names, origin, secure);
      // Auth.js's SessionStore takes every cookie whose name starts with the session name.
      const sessionCookies = [...cookies.keys()].filter(
        (n) => n.startsWith(names.session) && cookies.get(n) !== '',
      );
      if (sessionCookies.length === 0) {
        return { headers: readHeaders, cookies: init.set, body: 'null' };
      }
      // Chunked cookies and every "no session" outcome (which clears cookies) stay Auth.js's.
      if (sessionCookies.length !== 1 || sessionCookies[0] !== names.session) return undefined;
      const token = cookies.get(names.session) as string;
      const payload = decode(token, names.session);
      const claims = readClaims(payload);
      if (payload === null || claims === null || typeof payload.exp !== 'number') return undefined;
      const current = await deps.claims.validate(claims);
      if (current === null) return undefined;

      const now = deps.now();
      const { maxAgeSeconds, updateAgeSeconds, absoluteMaxAgeSeconds } = deps.session;
      // Auth.js re-issues the cookie on every read; we do so once its refresh is due (updateAge),
      // or at once when an older listed secret sealed it, so a rotation completes as people
      // come back instead of waiting a refresh period.
      const refreshDue =
        (payload.exp - maxAgeSeconds + updateAgeSeconds) * 1000 <= now ||
        (deps.secrets.length > 1 &&
          !deps.codec.sealedWith(token, deps.secrets[0] as string, names.session));
      const set = init.set;
      let expiresMs = payload.exp * 1000;
      if (refreshDue) {
        expiresMs = now + maxAgeSeconds * 1000;
        const renewed = deps.codec.encode({
          token: { ...payload, ...current },
          secret: [...deps.secrets],
          salt: names.session,
          maxAge: maxAgeSeconds,
        });
        // A token that Auth.js would split into chunks is left to Auth.js.
        if (renewed.length > maxUnchunkedTokenLength) return undefined;
        set.push(serializeCookie(names.session, renewed, { secure, expires: new Date(expiresMs) }));
      }
      const capMs = (current.auth_time + absoluteMaxAgeSeconds) * 1000;
      const body = {
        user: { id: current.sub, email: current.email, name: current.name },
        expires: new Date(Math.min(expiresMs, capMs)).toISOString(),
      };
      return { headers: readHeaders, cookies: set, body: JSON.stringify(body) };
    },
  };
}

export type FastReader = ReturnType<typeof createFastReader>;
