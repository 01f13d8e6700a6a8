import { canonicalToken, type JweCodec } from './jwe-codec.js';
import {
  authCookieNames,
  type AuthCookieNames,
  type SessionCookiePrefix,
} from '../cookies/cookie-names.js';
import { createInitCookies, type InitCookies } from '../cookies/init-cookies.js';
import { heldSessionToken, parseCookies, serializeCookie } from '../cookies/cookies.js';
import { RecentCache } from '../../util/recent-cache.js';
import {
  fromStore,
  StoreUnavailableError,
  type AuthRequestContext,
} from '../request/request-context.js';
import type { ActiveSession, SessionStore } from '../../sessions/session-store.js';

/*
 * What a session cookie means, and what `GET /api/auth/session` answers: the one place that
 * decides. Two callers ask it:
 *
 * - Auth.js's `jwt` callback (src/auth/session/session-claims.ts) asks `live(token)`: is the token's
 *   session still live (idle expiry against our clock, the absolute cap, the session row and
 *   its user)? Every read that goes through Auth.js is checked here, once.
 * - With fast paths on, the session and CSRF reads are answered without Auth.js's pipeline
 *   (`fast.session`, `fast.csrf`), in front of Fastify (src/auth/session/front-read.ts) or in the route.
 *   `fast.session` asks the same `live()`, then builds the answer Auth.js would.
 *
 * A read the fast branch cannot answer exactly as Auth.js would (a chunked cookie, a token it
 * cannot read, claims that are not Gatehouse's) is declined *before* the store is asked, and
 * synchronously: Auth.js then reads it and checks it, once. Once the store has been asked, the
 * fast branch answers every outcome itself: a live session, a session that is over (`null`,
 * the cookie cleared as Auth.js's SessionStore clears it), a refresh whose token needs chunks
 * (split as SessionStore splits it), and a store failure (StoreUnavailableError, which its
 * caller answers 503). So nothing is handed from the fast branch to Auth.js but the request
 * itself, and revocation is checked once per request. Differential tests pin the equivalence
 * (test/auth/session-read-matches-auth-js.test.ts, test/auth/fast-paths-answer-as-auth-js.generated.test.ts).
 */

/** Auth.js's (jose's) allowance for clock skew when it checks `exp`. */
export const expClockToleranceSeconds = 15;

/** The claims every Gatehouse session token carries beyond Auth.js's own. */
export interface GatehouseClaims extends Record<string, unknown> {
  sub: string;
  email: string;
  name: string;
  /** Session id: a row in the store; revoked or unknown reads as no session. */
  sid: string;
  /** Sign-in time, seconds since the epoch; the absolute cap counts from here. */
  auth_time: number;
}

export function readClaims(token: Record<string, unknown> | null): GatehouseClaims | null {
  if (token === null) return null;
  const { sub, email, name, sid, auth_time: authTime } = token;
  if (typeof sub !== 'string' || typeof sid !== 'string' || typeof authTime !== 'number') {
    return null;
  }
  return {
    sub,
    sid,
    auth_time: authTime,
    email: typeof email === 'string' ? email : '',
    name: typeof name === 'string' ? name : '',
  };
}

/** The session answer's body: exactly `{user: {id, email, name}, expires}`, capped. */
export interface SessionBody {
  user: { id: string; email: string; name: string };
  expires: string;
}

export interface FastAnswer {
  headers: Readonly<Record<string, string>>;
  cookies: string[];
  body: string;
}

export interface SessionReadDeps {
  sessions: Pick<SessionStore, 'findActive' | 'findActiveNow'>;
  secrets: readonly string[];
  session: { maxAgeSeconds: number; updateAgeSeconds: number; absoluteMaxAgeSeconds: number };
  sessionCookiePrefix: SessionCookiePrefix;
  now: () => number;
  /** Gatehouse's synchronous codec: with it, the fast branch exists (fast paths on). */
  codec: JweCodec | undefined;
  /**
   * Notes a live session's read for its "last seen" (src/sessions/last-seen.ts): synchronous,
   * in memory, nothing awaited; the writes happen on a timer, off this path.
   */
  seen?: ((sessionId: string, atMs: number) => void) | undefined;
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

const recentCapacity = 2048;
// Tokens a client sends are up to a header's size, and any number of them may read (spaced
// variants of one, many sessions): the cache is bounded by bytes as well as by entries.
const decodedBudgetBytes = 4 * 1024 * 1024;
// A Map entry, the key string's and the claims object's headers, roughly.
const entryOverheadBytes = 128;

// Auth.js's SessionStore chunks values past 4096 - 160 bytes, in pieces of that size.
const chunkLength = 4096 - 160;

/** Auth.js sends these on the session and CSRF answers alike (one object: front-read.ts knows it). */
export const readHeaders: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  'cache-control': 'private, no-cache, no-store',
  expires: '0',
  pragma: 'no-cache',
};

export function createSessionRead(deps: SessionReadDeps) {
  const capSeconds = deps.session.absoluteMaxAgeSeconds;

  /** The token's claims while its own times allow (idle expiry, the absolute cap), else null. */
  function inTime(token: Record<string, unknown>, nowSeconds: number): GatehouseClaims | null {
    const claims = readClaims(token);
    if (claims === null) return null;
    // The decoder checked `exp` against its own clock; this repeats it against ours, so an
    // injected clock governs idle expiry whichever codec is in use (tolerance as Auth.js's).
    const exp = token.exp;
    if (typeof exp === 'number' && exp + expClockToleranceSeconds <= nowSeconds) return null;
    if (claims.auth_time + capSeconds <= nowSeconds) return null;
    return claims;
  }

  /** The claims with the store's email and name, or null when the row says the session is over. */
  function withRow(
    claims: GatehouseClaims,
    active: ActiveSession | null,
    nowSeconds: number,
  ): GatehouseClaims | null {
    if (active === null || active.userId !== claims.sub) return null;
    deps.seen?.(claims.sid, nowSeconds * 1000);
    return { ...claims, email: active.email, name: active.name };
  }

  /**
   * The session a token's claims name, with the store's email and name, or null when it is
   * over. A store failure throws StoreUnavailableError (and marks `context`, inside Auth.js).
   */
  async function live(
    token: Record<string, unknown>,
    context?: AuthRequestContext,
  ): Promise<GatehouseClaims | null> {
    const nowSeconds = deps.now() / 1000;
    const claims = inTime(token, nowSeconds);
    if (claims === null) return null;
    const active = await fromStore(context, () => deps.sessions.findActive(claims.sid));
    return withRow(claims, active, nowSeconds);
  }

  /** `live` answered in the same turn, where the store's check is synchronous (SQLite). */
  const findNow = deps.sessions.findActiveNow;
  const liveNow =
    findNow === undefined
      ? undefined
      : (token: Record<string, unknown>): GatehouseClaims | null => {
          const nowSeconds = deps.now() / 1000;
          const claims = inTime(token, nowSeconds);
          if (claims === null) return null;
          let active: ActiveSession | null;
          try {
            active = findNow(claims.sid);
          } catch (error) {
            throw new StoreUnavailableError(error);
          }
          return withRow(claims, active, nowSeconds);
        };

  /** The answer's body; `expires` is the sliding expiry, never past the absolute cap. */
  function body(claims: GatehouseClaims | null, slidingExpiresMs: number): SessionBody {
    const capMs = ((claims?.auth_time ?? 0) + capSeconds) * 1000;
    return {
      user: { id: claims?.sub ?? '', email: claims?.email ?? '', name: claims?.name ?? '' },
      expires: new Date(Math.min(slidingExpiresMs, capMs)).toISOString(),
    };
  }

  return {
    live,
    body,
    fast:
      deps.codec === undefined
        ? undefined
        : createFastBranch(deps, deps.codec, { live, liveNow }, body),
  };
}

export type SessionRead = ReturnType<typeof createSessionRead>;
export type FastReader = NonNullable<SessionRead['fast']>;

/**
 * `GET /api/auth/session` and `GET /api/auth/csrf` answered without Auth.js's per-request
 * pipeline (Request objects, config set-up, WebCrypto digests), with the same configuration,
 * codec, liveness check, body, headers and cookies.
 */
function createFastBranch(
  deps: SessionReadDeps,
  codec: JweCodec,
  {
    live,
    liveNow,
  }: {
    live: (token: Record<string, unknown>) => Promise<GatehouseClaims | null>;
    liveNow: ((token: Record<string, unknown>) => GatehouseClaims | null) | undefined;
  },
  body: (claims: GatehouseClaims, slidingExpiresMs: number) => SessionBody,
) {
  const initCookies = createInitCookies(deps.secrets);
  // The cookie names for http and https, made once: a name built per read is a new string that
  // every Map lookup with it hashes again.
  const plainNames = authCookieNames(false, deps.sessionCookiePrefix);
  const secureNames = authCookieNames(true, deps.sessionCookiePrefix);
  // A browser repeats the same cookies on every read: remember tokens already decrypted
  // (expiry and revocation are still checked on every read), so a repeat costs a Map lookup.
  // Keyed on the token's canonical form, which the codec reads exactly as the token itself:
  // blanks or padding added to a token do not make another entry. The salt (the cookie's name)
  // is kept beside the claims, not in the key: a key joined per read is a copy of the token,
  // hashed anew, on every read; a token held under another name than it was read under misses.
  const decoded = new RecentCache<string, { salt: string; claims: Record<string, unknown> }>(
    recentCapacity,
    {
      maxWeight: decodedBudgetBytes,
      // Claims held as an object take about twice their JSON's size.
      weigh: (key, { salt, claims }) =>
        key.length + salt.length + 2 * JSON.stringify(claims).length + entryOverheadBytes,
    },
  );
  const decode = (token: string, salt: string): Record<string, unknown> | null => {
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

  /** The held session cookie cleared, as Auth.js's SessionStore.clean() writes it. */
  const cleared = (name: string, secure: boolean) =>
    serializeCookie(name, '', { secure, maxAgeSeconds: 0 });

  /**
   * The session token held, decrypted: `null` when there is none, `undefined` when the read is
   * Auth.js's (chunks; a token that does not read, which Auth.js logs; claims that are not
   * Gatehouse's). A whole cookie that reads wins over strays beside it, as in the bridge.
   */
  function heldToken(cookies: Map<string, string>, name: string): HeldToken | null | undefined {
    const held = heldSessionToken(cookies, name, (whole) => decode(whole, name) !== null);
    if (held.token === undefined) return null;
    if (!held.whole) return undefined;
    const token = held.token;
    const payload = decode(token, name);
    if (payload === null || readClaims(payload) === null) return undefined;
    const exp = payload.exp;
    return typeof exp === 'number' ? { token, payload, exp } : undefined;
  }

  /** A live session's answer: the cookie re-issued once its refresh is due, in chunks if long. */
  function liveAnswer(
    held: HeldToken,
    current: GatehouseClaims,
    names: AuthCookieNames,
    secure: boolean,
    set: string[],
    memo: ReadMemo | undefined,
  ): FastAnswer {
    const { token, payload, exp } = held;
    const now = deps.now();
    const { maxAgeSeconds, updateAgeSeconds } = deps.session;
    // Auth.js re-issues the cookie on every read; we do so once its refresh is due (updateAge),
    // or at once when an older listed secret sealed it, so a rotation completes as people
    // come back instead of waiting a refresh period.
    const refreshDue =
      (exp - maxAgeSeconds + updateAgeSeconds) * 1000 <= now ||
      (deps.secrets.length > 1 &&
        !codec.sealedWith(token, deps.secrets[0] as string, names.session));
    let expiresMs = exp * 1000;
    if (refreshDue) {
      expiresMs = now + maxAgeSeconds * 1000;
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
    }
    return { headers: readHeaders, cookies: set, body: bodyText(held, current, expiresMs, memo) };
  }

  /** The body as JSON, the memo's when the same email, name and expiry made it. */
  function bodyText(
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
      let held: HeldToken | null | undefined;
      let set: string[];
      const kept = memo?.held;
      if (
        memo !== undefined &&
        kept !== undefined &&
        memo.header === cookieHeader &&
        memo.origin === origin &&
        memo.secure === secure &&
        // As a cache hit in `decode`: a held token read again must still be in time.
        kept !== null &&
        kept.exp + expClockToleranceSeconds > deps.now() / 1000
      ) {
        held = kept;
        set = [];
      } else {
        const cookies = parseCookies(cookieHeader);
        held = heldToken(cookies, names.session);
        if (held === undefined) return undefined;
        set = initCookies(cookies, names, origin, secure).set;
        if (memo !== undefined) {
          // Only a session token's read with nothing made fresh per read may be repeated.
          const keeps =
            set.length === 0 && cookieHeader !== undefined && cookieHeader.length <= memoHeaderMax;
          memo.held = keeps && held !== null ? held : undefined;
          memo.header = memo.held === undefined ? undefined : cookieHeader;
          memo.origin = origin;
          memo.secure = secure;
          memo.body = undefined;
        }
      }
      if (held === null) return { headers: readHeaders, cookies: set, body: 'null' };
      const token = held;
      const answer = (current: GatehouseClaims | null): FastAnswer => {
        if (current !== null) return liveAnswer(token, current, names, secure, set, memo);
        // Over: Auth.js's `null`, with the cookie cleared.
        set.push(cleared(names.session, secure));
        return { headers: readHeaders, cookies: set, body: 'null' };
      };
      if (liveNow !== undefined) return answer(liveNow(token.payload));
      return live(token.payload).then(answer);
    },
  };
}
