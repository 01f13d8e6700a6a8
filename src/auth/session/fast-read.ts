import { canonicalToken, type JweCodec } from './jwe-codec.js';
import {
  authCookieNames,
  type AuthCookieNames,
  type SessionCookiePrefix,
} from '../cookies/cookie-names.js';
import { createInitCookies, type InitCookies } from '../cookies/init-cookies.js';
import { heldSessionToken, parseCookies, serializeCookie } from '../cookies/cookies.js';
import { readCache } from '../../sessions/caches.js';
import {
  expClockToleranceSeconds,
  readClaims,
  type GatehouseClaims,
  type SessionBody,
} from './token-claims.js';

/*
 * The session read's fast branch (src/auth/session/session-read.ts says when it answers):
 * `GET /api/auth/session` and `GET /api/auth/csrf` answered without Auth.js's per-request
 * pipeline (Request objects, config set-up, WebCrypto digests), with the same configuration,
 * codec, liveness check, body, headers and cookies.
 */

export interface FastAnswer {
  headers: Readonly<Record<string, string>>;
  cookies: string[];
  body: string;
}

/**
 * What one connection's last session read settled from its Cookie header (the front keeps one
 * per connection, src/auth/session/front-read.ts): a browser repeats the same header on every read of
 * a kept-alive connection, so a repeat is one string comparison instead of parsing the header,
 * hashing the token for the decrypted-token cache and checking the CSRF cookie again. Expiry
 * and revocation are still checked on every read. Kept only for a session token, a header of
 * at most `memoHeaderMax` characters, and an answer with nothing made fresh per read (no new
 * CSRF token, no cookie to set).
 */
export interface ReadMemo {
  header?: string | undefined;
  origin?: string;
  secure?: boolean;
  held?: HeldToken | undefined;
  /** The last live answer's body and what it was made of. */
  body?: { held: HeldToken; email: string; name: string; expiresMs: number; text: string };
}

/**
 * A Cookie header longer than this is not kept: a connection holds at most this much between
 * its reads (a browser's session, CSRF and callback cookies take about 1 KB).
 */
const memoHeaderMax = 4096;

interface HeldToken {
  token: string;
  payload: Record<string, unknown>;
  exp: number;
}

// Auth.js's SessionStore chunks values past 4096 - 160 bytes, in pieces of that size.
const chunkLength = 4096 - 160;

/** Auth.js sends these on the session and CSRF answers alike (one object: front-read.ts knows it). */
export const readHeaders: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  'cache-control': 'private, no-cache, no-store',
  expires: '0',
  pragma: 'no-cache',
};

/** What the fast branch reads its configuration from (session-read.ts's deps). */
export interface FastReadDeps {
  secrets: readonly string[];
  session: { maxAgeSeconds: number; updateAgeSeconds: number };
  sessionCookiePrefix: SessionCookiePrefix;
  now: () => number;
}

/** session-read's checks the fast branch answers with. */
export interface ReadChecks {
  live: (token: Record<string, unknown>) => Promise<GatehouseClaims | null>;
  /** `live` in the same turn, where the store's check is synchronous (SQLite). */
  liveNow: ((token: Record<string, unknown>) => GatehouseClaims | null) | undefined;
  body: (claims: GatehouseClaims, slidingExpiresMs: number) => SessionBody;
}

type Decode = (token: string, salt: string) => Record<string, unknown> | null;

/**
 * The codec's decode behind a cache of tokens already decrypted (src/sessions/caches.ts): a
 * browser repeats the same cookies on every read, so a repeat costs a Map lookup; expiry and
 * revocation are still checked on every read. Keyed on the token's canonical form, which the
 * codec reads exactly as the token itself: blanks or padding added to a token do not make
 * another entry. The salt (the cookie's name) is kept beside the claims, not in the key: a key
 * joined per read is a copy of the token, hashed anew, on every read; a token held under
 * another name than it was read under misses.
 */
function cachedDecode(deps: FastReadDeps, codec: JweCodec): Decode {
  const decoded = readCache<string, { salt: string; claims: Record<string, unknown> }>(
    'decryptedTokens',
    // Claims held as an object take about twice their JSON's size.
    (key, { salt, claims }) => key.length + salt.length + 2 * JSON.stringify(claims).length,
  );
  return (token, salt) => {
    const key = canonicalToken(token);
    const hit = decoded.get(key);
    if (hit !== undefined && hit.salt === salt) {
      // The codec checked exp against the clock when it decrypted; a cached token must too.
      const exp = hit.claims.exp;
      return typeof exp === 'number' && exp + expClockToleranceSeconds > deps.now() / 1000
        ? hit.claims
        : null;
    }
    const payload = codec.decode({ token, secret: [...deps.secrets], salt });
    if (payload !== null) decoded.set(key, { salt, claims: payload });
    return payload;
  };
}

/** The held session cookie cleared, as Auth.js's SessionStore.clean() writes it. */
const cleared = (name: string, secure: boolean) =>
  serializeCookie(name, '', { secure, maxAgeSeconds: 0 });

/**
 * The session token held, decrypted: `null` when there is none, `undefined` when the read is
 * Auth.js's (chunks; a token that does not read, which Auth.js logs; claims that are not
 * Gatehouse's). A whole cookie that reads wins over strays beside it, as in the bridge.
 */
function heldToken(
  decode: Decode,
  cookies: Map<string, string>,
  name: string,
): HeldToken | null | undefined {
  const held = heldSessionToken(cookies, name, (whole) => decode(whole, name) !== null);
  if (held.token === undefined) return null;
  if (!held.whole) return undefined;
  const token = held.token;
  const payload = decode(token, name);
  if (payload === null || readClaims(payload) === null) return undefined;
  const exp = payload.exp;
  return typeof exp === 'number' ? { token, payload, exp } : undefined;
}

/**
 * The session cookie re-issued into `set` once its refresh is due (updateAge), or at once when
 * an older listed secret sealed it, so a rotation completes as people come back instead of
 * waiting a refresh period (Auth.js re-issues it on every read); in chunks if long. Returns the
 * session's sliding expiry.
 */
function renewWhenDue(
  deps: FastReadDeps,
  codec: JweCodec,
  held: HeldToken,
  current: GatehouseClaims,
  names: AuthCookieNames,
  secure: boolean,
  set: string[],
): number {
  const { token, payload, exp } = held;
  const now = deps.now();
  const { maxAgeSeconds, updateAgeSeconds } = deps.session;
  const refreshDue =
    (exp - maxAgeSeconds + updateAgeSeconds) * 1000 <= now ||
    (deps.secrets.length > 1 && !codec.sealedWith(token, deps.secrets[0] as string, names.session));
  if (!refreshDue) return exp * 1000;
  const expiresMs = now + maxAgeSeconds * 1000;
  const expires = new Date(expiresMs);
  const renewed = codec.encode({
    token: { ...payload, ...current },
    secret: [...deps.secrets],
    salt: names.session,
    maxAge: maxAgeSeconds,
  });
  if (renewed.length <= chunkLength) {
    set.push(serializeCookie(names.session, renewed, { secure, expires }));
  } else {
    // SessionStore.chunk(): the held cookie cleared, then `.0`, `.1`… in its place.
    set.push(cleared(names.session, secure));
    for (let at = 0, i = 0; at < renewed.length; at += chunkLength, i += 1) {
      const chunk = renewed.slice(at, at + chunkLength);
      set.push(serializeCookie(`${names.session}.${i}`, chunk, { secure, expires }));
    }
  }
  return expiresMs;
}

/** The body as JSON, the memo's when the same email, name and expiry made it. */
function bodyText(
  body: ReadChecks['body'],
  held: HeldToken,
  current: GatehouseClaims,
  expiresMs: number,
  memo: ReadMemo | undefined,
) {
  const last = memo?.body;
  if (
    last !== undefined &&
    last.held === held &&
    last.expiresMs === expiresMs &&
    last.email === current.email &&
    last.name === current.name
  ) {
    return last.text;
  }
  const text = JSON.stringify(body(current, expiresMs));
  if (memo !== undefined) {
    memo.body = { held, email: current.email, name: current.name, expiresMs, text };
  }
  return text;
}

/** The memo's token when this read repeats its connection's last Cookie header, still in time. */
function repeated(
  memo: ReadMemo | undefined,
  cookieHeader: string | undefined,
  origin: string,
  secure: boolean,
  now: () => number,
): HeldToken | undefined {
  if (memo === undefined) return undefined;
  const kept = memo.held;
  return kept !== undefined &&
    memo.header === cookieHeader &&
    memo.origin === origin &&
    memo.secure === secure &&
    // As a cache hit in `decode`: a held token read again must still be in time.
    kept.exp + expClockToleranceSeconds > now() / 1000
    ? kept
    : undefined;
}

/** What this read settled, kept for the connection's next: only a token's, nothing fresh. */
function remember(
  memo: ReadMemo,
  cookieHeader: string | undefined,
  origin: string,
  secure: boolean,
  held: HeldToken | null,
  set: string[],
) {
  const keeps =
    set.length === 0 && cookieHeader !== undefined && cookieHeader.length <= memoHeaderMax;
  memo.held = keeps && held !== null ? held : undefined;
  memo.header = memo.held === undefined ? undefined : cookieHeader;
  memo.origin = origin;
  memo.secure = secure;
  memo.body = undefined;
}

export function createFastBranch(deps: FastReadDeps, codec: JweCodec, checks: ReadChecks) {
  const initCookies = createInitCookies(deps.secrets);
  // The cookie names for http and https, made once: a name built per read is a new string that
  // every Map lookup with it hashes again.
  const plainNames = authCookieNames(false, deps.sessionCookiePrefix);
  const secureNames = authCookieNames(true, deps.sessionCookiePrefix);
  const decode = cachedDecode(deps, codec);

  /** A live session's answer, or Auth.js's `null` with the cookie cleared when it is over. */
  function answer(
    held: HeldToken,
    current: GatehouseClaims | null,
    names: AuthCookieNames,
    secure: boolean,
    set: string[],
    memo: ReadMemo | undefined,
  ): FastAnswer {
    if (current === null) {
      set.push(cleared(names.session, secure));
      return { headers: readHeaders, cookies: set, body: 'null' };
    }
    const expiresMs = renewWhenDue(deps, codec, held, current, names, secure, set);
    const text = bodyText(checks.body, held, current, expiresMs, memo);
    return { headers: readHeaders, cookies: set, body: text };
  }

  return {
    /** Auth.js's init() for these cookies (and a usable callbackUrl parameter, if any). */
    csrfCookies(
      cookieHeader: string | undefined,
      origin: string,
      secure: boolean,
      callbackParam?: string,
    ): InitCookies {
      const names = secure ? secureNames : plainNames;
      return initCookies(parseCookies(cookieHeader), names, origin, secure, callbackParam);
    },

    csrf(cookieHeader: string | undefined, origin: string, secure: boolean): FastAnswer {
      const names = secure ? secureNames : plainNames;
      const init = initCookies(parseCookies(cookieHeader), names, origin, secure);
      return {
        headers: readHeaders,
        cookies: init.set,
        body: JSON.stringify({ csrfToken: init.csrfToken }),
      };
    },

    /**
     * The session answer, or `undefined` (decided at once, before the store is asked) when the
     * read is Auth.js's to answer. A store failure is StoreUnavailableError: thrown where the
     * store answers in the same turn (SQLite, and then the answer is not a promise either),
     * else the promise's rejection.
     */
    session(
      cookieHeader: string | undefined,
      origin: string,
      secure: boolean,
      memo?: ReadMemo,
    ): FastAnswer | Promise<FastAnswer> | undefined {
      const names = secure ? secureNames : plainNames;
      let held: HeldToken | null | undefined = repeated(
        memo,
        cookieHeader,
        origin,
        secure,
        deps.now,
      );
      let set: string[];
      if (held !== undefined) set = [];
      else {
        const cookies = parseCookies(cookieHeader);
        held = heldToken(decode, cookies, names.session);
        if (held === undefined) return undefined;
        set = initCookies(cookies, names, origin, secure).set;
        if (memo !== undefined) remember(memo, cookieHeader, origin, secure, held, set);
      }
      if (held === null) return { headers: readHeaders, cookies: set, body: 'null' };
      const token = held;
      if (checks.liveNow !== undefined) {
        return answer(token, checks.liveNow(token.payload), names, secure, set, memo);
      }
      return checks
        .live(token.payload)
        .then((current) => answer(token, current, names, secure, set, memo));
    },
  };
}
