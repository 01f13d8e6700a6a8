import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { revokeUserSessions } from '../sessions/session-store.js';
import { record, type NewAccountEvent } from './events.js';
import type { NoticedAccount } from './security-notice.js';

/** A user as the account routes show them. */
export interface AccountView {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
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
     * A password change, in one transaction: the new hash (only over the hash the current
     * password was checked against: a concurrent change wins), the credential version moved on
     * (so sign-ins that verified the old password and every e-mailed secret issued before it
     * are void), every session of the user ended, and the current one continued under a new
     * id (its sign-in time kept for the absolute cap, its proof of the password now), and
     * `notify` (the notice's mail) in the same transaction. Returns the new session id, or null
     * when the password changed meanwhile.
     */
    async changePassword(change: {
      userId: string;
      sessionId: string;
      oldHash: string;
      newHash: string;
      at: number;
      event: Omit<NewAccountEvent, 'userId' | 'type'>;
      notify?: (trx: Kysely<Database>, account: NoticedAccount) => Promise<void>;
    }): Promise<{ sessionId: string; endedOthers: number } | null> {
      const { userId, at } = change;
      return db.transaction().execute(async (trx) => {
        const current = await trx
          .selectFrom('sessions')
          .select('created_at')
          .where('id', '=', change.sessionId)
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (current === undefined) return null;
        const updated = await trx
          .updateTable('users')
          .set((eb) => ({
            password_hash: change.newHash,
            credential_version: eb('credential_version', '+', 1),
            updated_at: at,
          }))
          .where('id', '=', userId)
          .where('password_hash', '=', change.oldHash)
          .returning(['email', 'name', 'credential_version'])
          .executeTakeFirst();
        if (updated === undefined) return null;
        const ended = Number((await revokeUserSessions(trx, userId, at)).numUpdatedRows);
        const sessionId = randomUUID();
        await trx
          .insertInto('sessions')
          .values({
            id: sessionId,
            user_id: userId,
            created_at: Number(current.created_at),
            revoked_at: null,
            authenticated_at: at,
          })
          .execute();
        const endedOthers = Math.max(0, ended - 1);
        await record(trx, {
          ...change.event,
          userId,
          type: 'password_changed',
          detail: { endedSessions: endedOthers },
        });
        await change.notify?.(trx, {
          id: userId,
          email: updated.email,
          name: updated.name,
          credentialVersion: Number(updated.credential_version),
        });
        return { sessionId, endedOthers };
      });
    },

    async rename(userId: string, name: string, at: number): Promise<boolean> {
      const result = await db
        .updateTable('users')
        .set({ name, updated_at: at })
        .where('id', '=', userId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}

export type AccountStore = ReturnType<typeof createAccountStore>;
