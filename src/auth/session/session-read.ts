import type { JweCodec } from './jwe-codec.js';
import type { SessionCookiePrefix } from '../cookies/cookie-names.js';
import { createFastBranch } from './fast-read.js';
import {
  expClockToleranceSeconds,
  readClaims,
  type GatehouseClaims,
  type SessionBody,
} from './token-claims.js';
import {
  fromStore,
  StoreUnavailableError,
  type AuthRequestContext,
} from '../request/request-context.js';
import type { ActiveSession, SessionStore } from '../../sessions/session-store.js';

export { readHeaders, type FastAnswer, type ReadMemo } from './fast-read.js';
export {
  expClockToleranceSeconds,
  readClaims,
  type GatehouseClaims,
  type SessionBody,
} from './token-claims.js';

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
 * The fast branch itself is fast-read.ts.
 */

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
        : createFastBranch(deps, deps.codec, { live, liveNow, body }),
  };
}

export type SessionRead = ReturnType<typeof createSessionRead>;
export type FastReader = NonNullable<SessionRead['fast']>;
