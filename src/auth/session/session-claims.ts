import { CredentialsSignin } from '@auth/core/errors';
import type { JWT } from '@auth/core/jwt';
import type { Session } from '@auth/core/types';
import { fromStore, type AuthRequestContext } from '../request/request-context.js';
import type { SessionStore } from '../../sessions/session-store.js';
import { readClaims, type GatehouseClaims, type SessionRead } from './session-read.js';

export interface SessionClaimsDeps {
  sessions: SessionStore;
  /** What a token means and whether its session is live (src/auth/session/session-read.ts). */
  read: Pick<SessionRead, 'live' | 'body'>;
  now: () => number;
  /** Reads a session token the way Auth.js does (same codec, same salt). */
  decodeSessionToken(token: string): Promise<JWT | null>;
  log: { info(fields: object, message: string): void };
}

/**
 * Auth.js callbacks that make a JWT session revocable: sign-in mints a token naming a new
 * session row, every read asks session-read whether that row is still live (returning null
 * from `jwt` makes Auth.js answer `null` and clear the cookie), sign-out ends the rows.
 */
export function createSessionClaims(deps: SessionClaimsDeps) {
  async function revokeHeldSession(context: AuthRequestContext): Promise<void> {
    const token = context.previousSessionToken;
    if (token === undefined) return;
    const claims = readClaims(await deps.decodeSessionToken(token));
    if (claims !== null) {
      await fromStore(context, () => deps.sessions.revoke(claims.sid, deps.now()));
    }
  }

  return {
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
        const credential = context.verifiedCredential;
        if (credential?.userId !== user.id) {
          throw new Error('a sign-in reached the jwt callback without a verified credential');
        }
        // Fixation: a sign-in always gets a new session id, and the one held before ends.
        await revokeHeldSession(context);
        const at = deps.now();
        const client = { ip: context.clientIp, userAgent: context.userAgent ?? '' };
        const sid = await fromStore(context, () => deps.sessions.create(credential, at, client));
        if (sid === null) {
          // The password, disabled flag or account changed after authorize verified it: the
          // answer a wrong password gets, and no session.
          deps.log.info(
            { reason: 'credential_changed', clientIp: context.clientIp, userId: user.id },
            'sign-in refused',
          );
          context.signInResult = 'invalid';
          throw new CredentialsSignin();
        }
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
      const current = await deps.read.live(token, context);
      return current === null ? null : { ...token, ...current };
    },

    session(params: { session: Session; token: JWT }): Session {
      const sliding = new Date(params.session.expires).getTime();
      return deps.read.body(readClaims(params.token), sliding) as Session;
    },

    async signOut(message: { token?: JWT | null }, context: AuthRequestContext): Promise<void> {
      // The session Auth.js read, and every other one the request holds a token for.
      const sids = new Set<string>();
      const claims = readClaims(message.token ?? null);
      if (claims !== null) {
        sids.add(claims.sid);
        context.accountEvent = { type: 'signout', userId: claims.sub };
      }
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
