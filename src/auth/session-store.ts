import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** What a valid session row says about its user right now. */
export interface ActiveSession {
  userId: string;
  email: string;
  name: string;
  createdAt: number;
}

/** Server-side session rows, so that sign-out and revocation really end a session. */
export interface SessionStore {
  create(userId: string, createdAt: number): Promise<string>;
  /** Null when the session is unknown, revoked, or its user is disabled or gone. */
  findActive(sessionId: string): Promise<ActiveSession | null>;
  revoke(sessionId: string, at: number): Promise<void>;
  revokeAllForUser(userId: string, at: number): Promise<number>;
  /** Deletes rows no token can use any more (revoked, or signed in before `createdBefore`). */
  prune(createdBefore: number): Promise<void>;
}

export function createKyselySessionStore(db: Kysely<Database>): SessionStore {
  return {
    async create(userId, createdAt) {
      const id = randomUUID();
      await db
        .insertInto('sessions')
        .values({ id, user_id: userId, created_at: createdAt, revoked_at: null })
        .execute();
      return id;
    },

    async findActive(sessionId) {
      const row = await db
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select(['users.id as userId', 'users.email', 'users.name', 'sessions.created_at'])
        .where('sessions.id', '=', sessionId)
        .where('sessions.revoked_at', 'is', null)
        .where('users.disabled', '=', 0)
        .executeTakeFirst();
      if (!row) return null;
      return {
        userId: row.userId,
        email: row.email,
        name: row.name,
        createdAt: Number(row.created_at),
      };
    },

    async revoke(sessionId, at) {
      await db
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('id', '=', sessionId)
        .where('revoked_at', 'is', null)
        .execute();
    },

    async revokeAllForUser(userId, at) {
      const result = await db
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async prune(createdBefore) {
      await db
        .deleteFrom('sessions')
        .where((eb) =>
          eb.or([eb('revoked_at', 'is not', null), eb('created_at', '<', createdBefore)]),
        )
        .execute();
    },
  };
}
