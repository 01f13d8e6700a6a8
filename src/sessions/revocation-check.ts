import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { RawHandles } from '../db/open.js';
import type { Observer } from '../observe/observer.js';
import {
  activeSessionSql,
  toActive,
  type ActiveSession,
  type FindActive,
  type FindActiveNow,
} from './active-session.js';
import { postgresFindActive } from './postgres-find-active.js';
import { sqliteChecksWhileUncommitted } from './sqlite-checks-while-uncommitted.js';

export interface RevocationCheckOptions {
  /** DATABASE_PREPARED: named PostgreSQL statements unless false. */
  databasePrepared?: boolean | undefined;
  /** The operator's log: the check's fall-back from named statements warns there. */
  log?: { warn(fields: object, message: string): void } | undefined;
}

/** The check on each engine: `now` where the driver answers in the same turn (SQLite). */
export interface RevocationCheck {
  findActive: FindActive;
  findActiveNow: FindActiveNow | undefined;
}

function sqliteFindActive(
  handle: DatabaseSync,
  observer: Pick<Observer, 'databaseError'>,
): FindActiveNow {
  let statement: StatementSync | undefined;
  return (sessionId) => {
    try {
      // Prepared on first use: the table exists only once migrations have run.
      statement ??= handle.prepare(activeSessionSql('sqlite'));
      return toActive(statement.get(sessionId) as ActiveSession | undefined);
    } catch (error) {
      // Kysely's queries are counted where the database is opened; this one bypasses Kysely.
      observer.databaseError();
      throw error;
    }
  };
}

/**
 * The one revocation check every session read makes, over either store: the statement of
 * `activeSessionSql` prepared once on the raw handle behind Kysely (a node:sqlite statement on
 * the check's own connection, kept while nothing is committed; or a named PostgreSQL statement,
 * batched per event-loop round), instead of a Kysely build-and-compile per read.
 */
export function createRevocationCheck(
  handles: RawHandles,
  observer: Pick<Observer, 'databaseError'>,
  options: RevocationCheckOptions = {},
): RevocationCheck {
  if (handles.sqlite !== undefined) {
    const checks = handles.sqliteChecks;
    // On a file, on a connection of its own, kept while nothing is committed (sqlite.ts).
    const now =
      checks === undefined
        ? sqliteFindActive(handles.sqlite, observer)
        : sqliteChecksWhileUncommitted(sqliteFindActive(checks.handle, observer), checks.commits);
    return { findActiveNow: now, findActive: async (sessionId) => now(sessionId) };
  }
  if (handles.pgPool !== undefined) {
    const { log } = options;
    const findActive = postgresFindActive(handles.pgPool, {
      named: options.databasePrepared !== false,
      onError: observer.databaseError,
      warn: log && ((fields, message) => log.warn(fields, message)),
    });
    return { findActive, findActiveNow: undefined };
  }
  throw new TypeError('the session store needs the SQLite handle or the PostgreSQL pool');
}
