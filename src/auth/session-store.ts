import { randomUUID } from 'node:crypto';
import type { Database as SQLiteDatabase, Statement } from 'better-sqlite3';
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

/** Ends every live session of a user; also used inside the user store's transactions. */
export function revokeUserSessions(db: Kysely<Database>, userId: string, at: number) {
  return db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

const activeSessionSql = `select users.id as userId, users.email, users.name, sessions.created_at as createdAt
  from sessions join users on users.id = sessions.user_id
  where sessions.id = ? and sessions.revoked_at is null and users.disabled = 0`;

/**
 * Session rows on Kysely. With the raw SQLite handle, the per-request revocation check is one
 * prepared statement on the primary key instead of a Kysely round trip (it runs on every
 * session read).
 */
export function createKyselySessionStore(
  db: Kysely<Database>,
  sqlite?: SQLiteDatabase,
): SessionStore {
  let activeStatement: Statement<[string], ActiveSession> | undefined;
  const findActiveSqlite = (handle: SQLiteDatabase, sessionId: string): ActiveSession | null => {
    // Prepared on first use: the table exists only once migrations have run.
    activeStatement ??= handle.prepare<[string], ActiveSession>(activeSessionSql);
    const row = activeStatement.get(sessionId);
    return row === undefined ? null : { ...row, createdAt: Number(row.createdAt) };
  };
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
      if (sqlite !== undefined) return findActiveSqlite(sqlite, sessionId);
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
      const result = await revokeUserSessions(db, userId, at);
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
