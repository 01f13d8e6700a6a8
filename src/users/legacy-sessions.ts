import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { SessionClient } from '../sessions/session-insert.js';
import type { SessionStore } from '../sessions/session-store.js';
import { legacySessionHolder } from './imported-users.js';

/** An old app's session token, as the exchange knows it (src/auth/session/legacy-token.ts). */
export interface LegacyTokenKey {
  userId: string;
  /** SHA-256 of the token, hex. */
  tokenHash: string;
  expiresAtMs: number;
}

/** Old tokens and the Gatehouse sessions they became (migration 020). */
export interface LegacySessionStore {
  /** The session an old token became, or null when it never was exchanged. */
  exchangedAs(tokenHash: string): Promise<string | null>;
  /**
   * A new session for the imported user an old token names, kept as that token's one session;
   * null when the user may not have one (not imported, disabled, their old sessions closed, or
   * their password changed since the import). When two reads race, the first mapping wins.
   */
  exchange(token: LegacyTokenKey, at: number, client: SessionClient): Promise<string | null>;
  /** Forgets tokens past their own expiry: none of them is taken any more. */
  prune(at: number): Promise<void>;
}

export function createLegacySessionStore(
  db: Kysely<Database>,
  sessions: Pick<SessionStore, 'create' | 'revoke'>,
): LegacySessionStore {
  const exchangedAs = async (tokenHash: string) =>
    (
      await db
        .selectFrom('legacy_sessions')
        .select('session_id')
        .where('token_hash', '=', tokenHash)
        .executeTakeFirst()
    )?.session_id ?? null;
  return {
    exchangedAs,
    async exchange(token, at, client) {
      const holder = await legacySessionHolder(db, token.userId);
      if (holder === null) return null;
      // Issued only while the credential read above is current: a password change, a lock or a
      // disable since the import (each moves the version on) leaves the old cookie nothing.
      const sessionId = await sessions.create(
        {
          userId: holder.id,
          credentialVersion: holder.credentialVersion,
          proofs: ['carried_over'],
        },
        at,
        client,
      );
      if (sessionId === null) return null;
      const kept = await db
        .insertInto('legacy_sessions')
        .values({
          token_hash: token.tokenHash,
          user_id: holder.id,
          session_id: sessionId,
          created_at: at,
          expires_at: token.expiresAtMs,
        })
        .onConflict((conflict) => conflict.column('token_hash').doNothing())
        .executeTakeFirst();
      // A "sign out everywhere" between the check and the insert closed the old sessions.
      const stillOpen = (await legacySessionHolder(db, token.userId)) !== null;
      if (Number(kept.numInsertedOrUpdatedRows ?? 0n) === 0 || !stillOpen) {
        await sessions.revoke(sessionId, at);
        return stillOpen ? exchangedAs(token.tokenHash) : null;
      }
      return sessionId;
    },
    async prune(at) {
      await db.deleteFrom('legacy_sessions').where('expires_at', '<', at).execute();
    },
  };
}
