import { randomBytes, randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Kysely } from 'kysely';
import { deleteInBatches, type PruneStatementObserver } from '../db/delete-in-batches.js';
import type { RawHandles } from '../db/open.js';
import type { Database } from '../db/schema.js';
import {
  toActive,
  type ActiveSession,
  type FindActive,
  type FindActiveNow,
} from './active-session.js';
import { sqliteChecksWhileUncommitted } from './sqlite-checks-while-uncommitted.js';
import { postgresFindActive } from './postgres-find-active.js';
import { noObserver, type Observer } from '../observe/observer.js';
import { emitUserWebhook, webhooksOn, withWebhooks } from '../webhooks/emit.js';

type StoreObserver = Pick<Observer, 'sessionsRevoked' | 'databaseError'>;

export type { ActiveSession } from './active-session.js';

/** What a sign-in verified: the user, and the credential version its password was checked at. */
export interface VerifiedCredential {
  userId: string;
  credentialVersion: number;
  /**
   * How the sign-in was proved, in order (`password`, then what each check after it proved):
   * kept on the session, so a route can ask for more than a session proved.
   */
  proofs?: readonly string[];
}

/** The client a session was signed in from, as a person's sessions list shows it. */
export interface SessionClient {
  ip: string;
  /** The User-Agent ('' when none). */
  userAgent: string;
}

/** Longest address and User-Agent kept on a session row (bounded against padding). */
const ipMaxLength = 64;
export const userAgentMaxLength = 256;

/** A new session's public id: random, unrelated to its id, so no credential (migration 013). */
export const newPublicId = (): string => randomBytes(16).toString('base64url');

/** A session row's client columns, cut to their bounds. */
export const clientColumns = (client: SessionClient | undefined) => ({
  ip: (client?.ip ?? '').slice(0, ipMaxLength),
  user_agent: (client?.userAgent ?? '').slice(0, userAgentMaxLength),
});

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

// One join on the session's primary key (PostgreSQL's, batched: postgres-find-active.ts).
const activeSessionSql = `select users.id as "userId", users.email, users.name,
  sessions.created_at as "createdAt"
  from sessions join users on users.id = sessions.user_id
  where sessions.id = ? and sessions.revoked_at is null and users.disabled = 0`;

function sqliteFindActive(handle: DatabaseSync, observer: StoreObserver): FindActiveNow {
  let statement: StatementSync | undefined;
  return (sessionId) => {
    try {
      // Prepared on first use: the table exists only once migrations have run.
      statement ??= handle.prepare(activeSessionSql);
      return toActive(statement.get(sessionId) as ActiveSession | undefined);
    } catch (error) {
      // Kysely's queries are counted where the database is opened; this one bypasses Kysely.
      observer.databaseError();
      throw error;
    }
  };
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
  const perUserMax = handles.sessionsPerUserMax ?? defaultSessionsPerUserMax;
  const postgres = handles.sqlite === undefined;
  let findActive: FindActive;
  let findActiveNow: FindActiveNow | undefined;
  if (handles.sqlite !== undefined) {
    const checks = handles.sqliteChecks;
    // On a file, on a connection of its own, kept while nothing is committed (sqlite.ts).
    const now =
      checks === undefined
        ? sqliteFindActive(handles.sqlite, observer)
        : sqliteChecksWhileUncommitted(sqliteFindActive(checks.handle, observer), checks.commits);
    findActiveNow = now;
    findActive = async (sessionId) => now(sessionId);
  } else if (handles.pgPool !== undefined) {
    findActive = postgresFindActive(handles.pgPool, {
      named: handles.databasePrepared !== false,
      onError: observer.databaseError,
      warn: handles.log && ((fields, message) => handles.log?.warn(fields, message)),
    });
  } else throw new TypeError('the session store needs the SQLite handle or the PostgreSQL pool');
  /** The sign-in's insert and the per-user bound, on `db` or the webhook's transaction. */
  async function createOn(
    db: Kysely<Database>,
    { userId, credentialVersion, proofs = ['password'] }: VerifiedCredential,
    createdAt: number,
    client: SessionClient | undefined,
  ): Promise<{ id: string; publicId: string } | null> {
    const id = randomUUID();
    const publicId = newPublicId();
    const { ip, user_agent: userAgent } = clientColumns(client);
    // The check and the insert are one statement: a credential change commits either before
    // it (no row matches, no session) or after it (and its revocation ends this session). On
    // PostgreSQL the user row is read FOR SHARE: under READ COMMITTED the insert would
    // otherwise read the row as it was before a change still in flight and commit after that
    // change's revocation ran; the lock waits for the change and then sees its result. On
    // SQLite the statement holds the write lock from its start.
    const inserted = await db
      .insertInto('sessions')
      .columns([
        'id',
        'user_id',
        'created_at',
        'proofs',
        'public_id',
        'ip',
        'user_agent',
        'last_seen_at',
      ])
      .expression((eb) =>
        eb
          .selectFrom('users')
          .select((users) => [
            users.val(id).as('id'),
            'users.id as user_id',
            users.cast<number>(users.val(createdAt), 'bigint').as('created_at'),
            users.val(proofs.join(' ')).as('proofs'),
            users.val(publicId).as('public_id'),
            users.val(ip).as('ip'),
            users.val(userAgent).as('user_agent'),
            users.cast<number>(users.val(createdAt), 'bigint').as('last_seen_at'),
          ])
          .where('users.id', '=', userId)
          .where('users.credential_version', '=', credentialVersion)
          .where('users.disabled', '=', 0)
          .$if(postgres, (query) => query.forShare()),
      )
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return null;
    // A bounded number of live sessions per user: a client signing in in a loop would
    // otherwise grow the table without end. The oldest sign-ins beyond it are ended.
    const evicted = await db
      .updateTable('sessions')
      .set({ revoked_at: createdAt })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('id', 'not in', (qb) =>
        qb
          .selectFrom('sessions')
          .select('id')
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(perUserMax),
      )
      .executeTakeFirst();
    observer.sessionsRevoked('limit', Number(evicted.numUpdatedRows));
    return { id, publicId };
  }
  return {
    create(credential, createdAt, client) {
      // Webhooks off (the default): the sign-in's statements as they always were, on `db`.
      if (!webhooksOn())
        return createOn(db, credential, createdAt, client).then((made) => made?.id ?? null);
      return db.transaction().execute(async (trx) => {
        const made = await createOn(trx, credential, createdAt, client);
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
