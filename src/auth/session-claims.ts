import type { JWT } from '@auth/core/jwt';
import type { Session } from '@auth/core/types';
import { fromStore, type AuthRequestContext } from './request-context.js';
import type { SessionStore } from '../sessions/session-store.js';

export interface SessionClaimsDeps {
  sessions: SessionStore;
  absoluteMaxAgeSeconds: number;
  now: () => number;
  /** Reads a session token the way Auth.js does (same codec, same salt). */
  decodeSessionToken(token: string): Promise<JWT | null>;
}

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

export function readClaims(token: JWT | null): GatehouseClaims | null {
  if (token === null) return null;
  const { sub, email, name, sid, auth_time: authTime } = token as Record<string, unknown>;
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

/**
 * Auth.js callbacks that make a JWT session revocable: the token names a session row, and
 * every read checks the row, the user and the absolute lifetime. Returning null from `jwt`
 * makes Auth.js answer `null` and clear the cookie.
 */
export function createSessionClaims(deps: SessionClaimsDeps) {
  const capSeconds = deps.absoluteMaxAgeSeconds;

  /**
   * The row behind a token's claims, or null when the session is over. A store failure throws
   * StoreUnavailableError (and marks `context`, inside Auth.js).
   */
  async function validate(
    claims: GatehouseClaims,
    context?: AuthRequestContext,
  ): Promise<GatehouseClaims | null> {
    if (claims.auth_time + capSeconds <= deps.now() / 1000) return null;
    const active = await fromStore(context, () => deps.sessions.findActive(claims.sid));
    if (active === null || active.userId !== claims.sub) return null;
    return { ...claims, email: active.email, name: active.name };
  }

  async function revokeHeldSession(context: AuthRequestContext): Promise<void> {
    const token = context.previousSessionToken;
    if (token === undefined) return;
    const claims = readClaims(await deps.decodeSessionToken(token));
    if (claims !== null) {
      await fromStore(context, () => deps.sessions.revoke(claims.sid, deps.now()));
    }
  }

  return {
    validate,

    async jwt(
      params: {
        token: JWT;
        user?: { id?: string; email?: string | null; name?: string | null };
        trigger?: string;
      },
      context: AuthRequestContext,
    ): Promise<JWT | null> {
      const { token, user, trigger } = params;
      if (trigger === 'signIn' && user?.id !== undefined) {
        // Fixation: a sign-in always gets a new session id, and the one held before ends.
        await revokeHeldSession(context);
        const at = deps.now();
        const sid = await fromStore(context, () => deps.sessions.create(user.id as string, at));
        const claims: GatehouseClaims & JWT = {
          sub: user.id,
          email: user.email ?? '',
          name: user.name ?? '',
          sid,
          auth_time: Math.floor(at / 1000),
        };
        return claims;
      }
      // A client-sent `update` never changes the claims: they come from the store only.
      const claims = readClaims(token);
      if (claims === null) return null;
      // The decoder checked `exp` against its own clock; this repeats it against ours, so an
      // injected clock governs idle expiry whichever codec is in use (tolerance as Auth.js's).
      const exp = (token as { exp?: unknown }).exp;
      if (typeof exp === 'number' && exp + expClockToleranceSeconds <= deps.now() / 1000)
        return null;
      const current = await validate(claims, context);
      return current === null ? null : { ...token, ...current };
    },

    session(params: { session: Session; token: JWT }): Session {
      const claims = readClaims(params.token);
      const capMs = ((claims?.auth_time ?? 0) + capSeconds) * 1000;
      const sliding = new Date(params.session.expires).getTime();
      const expires = new Date(Math.min(sliding, capMs)).toISOString();
      // Exactly {user: {id, email, name}, expires}: no image, nothing else.
      return {
        user: { id: claims?.sub ?? '', email: claims?.email ?? '', name: claims?.name ?? '' },
        expires,
      } as Session;
    },

    async signOut(message: { token?: JWT | null }, context: AuthRequestContext): Promise<void> {
      // The session Auth.js read, and every other one the request holds a token for.
      const sids = new Set<string>();
      const claims = readClaims(message.token ?? null);
      if (claims !== null) sids.add(claims.sid);
      for (const token of context.heldSessionTokens ?? []) {
        const held = readClaims(await deps.decodeSessionToken(token));
        if (held !== null) sids.add(held.sid);
      }
      for (const sid of sids) {
        await fromStore(context, () => deps.sessions.revoke(sid, deps.now()));
      }
    },
  };
}

export type SessionClaims = ReturnType<typeof createSessionClaims>;
