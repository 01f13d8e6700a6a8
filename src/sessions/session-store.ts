import type { Kysely } from 'kysely';
import { deleteInBatches, type PruneStatementObserver } from '../db/delete-in-batches.js';
import type { RawHandles } from '../db/open.js';
import type { Database } from '../db/schema.js';
import type { ActiveSession, FindActiveNow } from './active-session.js';
import { createRevocationCheck } from './revocation-check.js';
import {
  insertSession,
  type InsertRules,
  type SessionClient,
  type VerifiedCredential,
} from './session-insert.js';
import { noObserver, type Observer } from '../observe/observer.js';
import { emitUserWebhook, webhooksOn, withWebhooks } from '../webhooks/emit.js';

type StoreObserver = Pick<Observer, 'sessionsRevoked' | 'databaseError'>;

export type { ActiveSession } from './active-session.js';

export { newPublicId, type SessionClient, type VerifiedCredential } from './session-insert.js';

/** Server-side session rows, so that sign-out and revocation really end a session. */
export interface SessionStore {
  /**
   * A new session's id, or null when the credential verified is no longer the user's current
   * one (a password change, disable or enable since), the user is disabled, or gone.
   */
  create(
    credential: VerifiedCredential,
    createdAt: number,
    client?: SessionClient,
  ): Promise<string | null>;
  /** Null when the session is unknown, revoked, or its user is disabled or gone. */
  findActive(sessionId: string): Promise<ActiveSession | null>;
  /**
   * `findActive` without a promise, on SQLite (whose driver is synchronous): the session read
   * answers in the same turn, without the promise chain's allocations and microtasks. Throws
   * what the driver throws. Undefined on PostgreSQL.
   */
  findActiveNow?: FindActiveNow;
  revoke(sessionId: string, at: number): Promise<void>;
  revokeAllForUser(userId: string, at: number): Promise<number>;
  /**
   * Deletes rows no token can use any more (revoked, or signed in before `createdBefore`);
   * `observe` is told of each statement (the prune benchmark).
   */
  prune(createdBefore: number, observe?: PruneStatementObserver): Promise<void>;
}

/** Live sessions a user may hold at once (`SESSIONS_PER_USER_MAX`). */
export const defaultSessionsPerUserMax = 100;

/**
 * Ends every live session of a user; also used inside the user store's transactions. With
 * webhooks on, one `session.revoked` says how many ended (in the caller's transaction, or one
 * of its own).
 */
export function revokeUserSessions(
  db: Kysely<Database>,
  userId: string,
  at: number,
  exceptSessionId: string | null = null,
) {
  return withWebhooks(db, async (trx) => {
    let ending = trx
      .updateTable('sessions')
      .set({ revoked_at: at })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null);
    if (exceptSessionId !== null) ending = ending.where('id', '!=', exceptSessionId);
    const result = await ending.executeTakeFirst();
    const count = Number(result.numUpdatedRows);
    if (count > 0) await emitUserWebhook(trx, 'session.revoked', userId, at, { sessions: count });
    return result;
  });
}

/**
 * Session rows on Kysely. The revocation check runs on every session read, so it is one
 * prepared statement on the primary key (a node:sqlite statement, or a named PostgreSQL
 * statement) on the raw handle behind `db`, instead of a Kysely build-and-compile per read.
 */
export function createKyselySessionStore(
  db: Kysely<Database>,
  handles: RawHandles & {
    sessionsPerUserMax?: number;
    databasePrepared?: boolean;
    /** The operator's log: the session check's fall-back from named statements warns there. */
    log?: { warn(fields: object, message: string): void };
  },
  observer: StoreObserver = noObserver,
): SessionStore {
  const insertRules: InsertRules = {
    perUserMax: handles.sessionsPerUserMax ?? defaultSessionsPerUserMax,
    postgres: handles.sqlite === undefined,
    observer,
  };
  const { findActive, findActiveNow } = createRevocationCheck(handles, observer, handles);
  return {
    create(credential, createdAt, client) {
      // Webhooks off (the default): the sign-in's statements as they always were, on `db`.
      if (!webhooksOn())
        return insertSession(db, insertRules, credential, createdAt, client).then(
          (made) => made?.id ?? null,
        );
      return db.transaction().execute(async (trx) => {
        const made = await insertSession(trx, insertRules, credential, createdAt, client);
        if (made === null) return null;
        await emitUserWebhook(trx, 'session.created', credential.userId, createdAt, {
          session: made.publicId,
        });
        return made.id;
      });
    },

    findActive,
    ...(findActiveNow !== undefined && { findActiveNow }),

    async revoke(sessionId, at) {
      const ending = (on: Kysely<Database>) =>
        on
          .updateTable('sessions')
          .set({ revoked_at: at })
          .where('id', '=', sessionId)
          .where('revoked_at', 'is', null);
      if (webhooksOn()) {
        const ended = await db.transaction().execute(async (trx) => {
          const row = await ending(trx).returning(['user_id', 'public_id']).executeTakeFirst();
          if (row !== undefined)
            await emitUserWebhook(trx, 'session.revoked', row.user_id, at, {
              ...(row.public_id !== null && { session: row.public_id }),
            });
          return row === undefined ? 0 : 1;
        });
        observer.sessionsRevoked('ended', ended);
        return;
      }
      const result = await ending(db).executeTakeFirst();
      observer.sessionsRevoked('ended', Number(result.numUpdatedRows));
    },

    async revokeAllForUser(userId, at) {
      const result = await revokeUserSessions(db, userId, at);
      const count = Number(result.numUpdatedRows);
      observer.sessionsRevoked('user', count);
      return count;
    },

    async prune(createdBefore, observe) {
      // Two filters, one index each (migration 007), in short batches: an OR of the two would
      // scan the table, holding SQLite's writer for as long.
      for (const over of ['revoked', 'signed in too long ago'] as const) {
        await deleteInBatches(
          db,
          (limit) =>
            db
              .deleteFrom('sessions')
              .where('id', 'in', (eb) => {
                const rows = eb.selectFrom('sessions').select('id');
                return (
                  over === 'revoked'
                    ? rows.where('revoked_at', 'is not', null)
                    : rows.where('created_at', '<', createdBefore)
                ).limit(limit);
              })
              .executeTakeFirst(),
          { observe },
        );
      }
    },
  };
}
