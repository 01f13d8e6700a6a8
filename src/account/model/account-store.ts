import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { newPublicId } from '../../sessions/session-store.js';
import type { Database } from '../../db/schema.js';
import { changeCredential, type CredentialChange, type EventClient } from './credential-change.js';

/** A user as the account routes show them. */
export interface AccountView {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
}

/** A password change, as the change-password route asks for it. */
export interface PasswordChange {
  userId: string;
  sessionId: string;
  oldHash: string;
  newHash: string;
  at: number;
  event: EventClient;
  notice?: CredentialChange['notice'];
}

/** See AccountStore's `changePassword`. */
async function changePassword(
  db: Kysely<Database>,
  change: PasswordChange,
): Promise<{ sessionId: string; endedOthers: number } | null> {
  const { userId, at } = change;
  return db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('sessions')
      .select(['created_at', 'proofs', 'ip', 'user_agent', 'last_seen_at'])
      .where('id', '=', change.sessionId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (current === undefined) return null;
    const changed = await changeCredential(trx, {
      userId,
      at,
      expect: { passwordHash: change.oldHash },
      set: { passwordHash: change.newHash },
      keepSessionId: change.sessionId,
      event: { type: 'password_changed', client: change.event },
      notice: change.notice,
    });
    if (changed === null) return null;
    await trx
      .updateTable('sessions')
      .set({ revoked_at: at })
      .where('id', '=', change.sessionId)
      .execute();
    const sessionId = randomUUID();
    await trx
      .insertInto('sessions')
      .values({
        id: sessionId,
        user_id: userId,
        created_at: Number(current.created_at),
        revoked_at: null,
        authenticated_at: at,
        proofs: current.proofs,
        // The same sign-in goes on under a new id: its client and last use go with it; its
        // public id is new, as the old row stays (revoked) until pruned.
        public_id: newPublicId(),
        ip: current.ip,
        user_agent: current.user_agent,
        last_seen_at: at,
      })
      .execute();
    return { sessionId, endedOthers: changed.endedSessions };
  });
}

/** The account routes' reads and writes beyond the user and session stores. */
export function createAccountStore(db: Kysely<Database>) {
  return {
    async view(userId: string): Promise<AccountView | null> {
      const row = await db
        .selectFrom('users')
        .select(['id', 'email', 'name', 'email_verified_at'])
        .where('id', '=', userId)
        .executeTakeFirst();
      if (row === undefined) return null;
      const { id, email, name } = row;
      return { id, email, name, emailVerified: row.email_verified_at !== null };
    },

    /**
     * When the session last proved the password: its sign-in or its last re-authentication
     * (ms), or null when the session is over.
     */
    async provedAt(sessionId: string): Promise<number | null> {
      const row = await db
        .selectFrom('sessions')
        .select(['created_at', 'authenticated_at'])
        .where('id', '=', sessionId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (row === undefined) return null;
      return Math.max(Number(row.created_at), Number(row.authenticated_at ?? 0));
    },

    /** Re-authentication: the session's proof is now. Never creates a session. */
    async reauthenticated(sessionId: string, at: number): Promise<boolean> {
      const result = await db
        .updateTable('sessions')
        .set({ authenticated_at: at })
        .where('id', '=', sessionId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /**
     * A password change, in one transaction: the account's credential change (the new hash,
     * only over the hash the current password was checked against, so a concurrent change wins;
     * every other session ended; `password_changed` recorded; the notice queued when `notice` is
     * given), and the current session continued under a new id (its sign-in time kept for the
     * absolute cap, its proof of the password now), so a copy of its old cookie ends with the
     * others. Returns the new session id, or null when the password or the session changed
     * meanwhile.
     */
    changePassword: (change: PasswordChange) => changePassword(db, change),
  };
}

export type AccountStore = ReturnType<typeof createAccountStore>;
