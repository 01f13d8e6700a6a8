import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type Logger, type SqliteDatabase } from 'kysely';
import { RecentCache } from '../util/recent-cache.js';
import type { Database } from './schema.js';
import { LockWaitingSqliteDialect } from './sqlite-lock-wait.js';

// better-sqlite3 waits for a lock synchronously, stalling the event loop: it does not wait at
// all; a statement that meets another process's lock (the CLI, a backup) is retried on timers
// instead (sqlite-lock-wait.ts). Our own process serialises on one connection.
export const sqliteBusyTimeoutMs = 0;
// Opening (switching to WAL) happens before anything is served: waiting there blocks nobody.
const openBusyTimeoutMs = 5000;

// Distinct statements Gatehouse runs: a few dozen; the bound only guards against a query
// whose text varies with its input.
const cachedStatements = 256;

/**
 * The handle Kysely runs queries on, keeping each prepared statement by its SQL text. Kysely
 * prepares every query anew, which was a fifth of a sign-in's main-thread time under a burst
 * (CPU profile). Reuse is safe: better-sqlite3 runs a statement to completion synchronously,
 * and Gatehouse never streams (`iterate`) a query.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new RecentCache<string, SQLite.Statement>(cachedStatements);
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * Opens the SQLite file, WAL so readers never wait on the writer. A new folder is made 0700 and
 * a new database file 0600 (password hashes and session ids): SQLite gives its -wal and -shm
 * files the database file's mode.
 */
export function openSqlite(
  filePath: string,
  log?: Logger,
): { db: Kysely<Database>; sqlite: SQLite.Database } {
  if (filePath !== ':memory:') {
    fs.mkdirSync(path.dirname(path.resolve(filePath)), { recursive: true, mode: 0o700 });
    // 'a' creates the file if missing and never truncates one that exists.
    fs.closeSync(fs.openSync(filePath, 'a', 0o600));
  }
  const sqlite = new SQLite(filePath, { timeout: openBusyTimeoutMs });
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${sqliteBusyTimeoutMs}`);
  const dialect = new LockWaitingSqliteDialect({ database: withStatementCache(sqlite) });
  return { db: new Kysely<Database>({ dialect, ...(log && { log }) }), sqlite };
}
