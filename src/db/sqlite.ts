import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { Kysely, type Logger, type SqliteDatabase, type SqliteStatement } from 'kysely';
import { watchSqliteCommits, type SqliteCommitWatch } from './sqlite-commit-watch.js';
import { RecentCache } from '../util/recent-cache.js';
import type { Database } from './schema.js';
import { LockWaitingSqliteDialect } from './sqlite-lock-wait.js';
import { checkpointWorkersStopped, markSqlite } from './wal-checkpoints.js';

// Node's own SQLite (`node:sqlite`), not better-sqlite3: on Node 24 better-sqlite3 13 (the only
// line that exits cleanly there) runs a prepared `get` at a third of the speed (116,000 against
// 350,000 a second here, measured), which halved the session read; this one ships in Node.
//
// SQLite would wait for a lock synchronously, stalling the event loop: it does not wait at all;
// a statement that meets another process's lock (the CLI, a backup) is retried on timers
// instead (sqlite-lock-wait.ts). Our own process serialises on one connection.
export const sqliteBusyTimeoutMs = 0;
// Opening (switching to WAL) happens before anything is served: waiting there blocks nobody.
const openBusyTimeoutMs = 5000;

// Distinct statements Gatehouse runs: a few dozen; the bound only guards against a query
// whose text varies with its input.
const cachedStatements = 256;

/** Kysely passes parameters as one array; node:sqlite takes them as arguments. */
function forKysely(statement: StatementSync): SqliteStatement {
  const values = (parameters: ReadonlyArray<unknown>) => parameters as SQLInputValue[];
  return {
    // A statement that returns columns is read with all(); others are run().
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...values(parameters)),
    run: (parameters) => statement.run(...values(parameters)),
    iterate: (parameters) => statement.iterate(...values(parameters)),
  };
}

/**
 * The handle Kysely runs queries on, keeping each prepared statement by its SQL text. Kysely
 * prepares every query anew, which was a fifth of a sign-in's main-thread time under a burst
 * (CPU profile). Reuse is safe: node:sqlite runs a statement to completion synchronously, and
 * Gatehouse never streams (`iterate`) a query.
 */
function withStatementCache(sqlite: DatabaseSync, onClose: () => void): SqliteDatabase {
  const statements = new RecentCache<string, SqliteStatement>(cachedStatements);
  return {
    close: () => {
      sqlite.close();
      onClose();
    },
    prepare(sql) {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = forKysely(sqlite.prepare(sql));
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * The database file's folder is missing and was not ours to make (an explicit DATABASE_URL):
 * more likely a typo or an unmounted volume than a wish for a new, empty database.
 */
export class MissingFolderError extends Error {
  constructor(readonly folder: string) {
    super(`the folder ${folder} does not exist`);
  }
}

/** What to do with an existing database file that others may read: production refuses. */
export type LooseFileModes = 'warn' | 'refuse';

/**
 * The database and its -wal/-shm hold password hashes and session ids: a file that group or
 * others can reach (an old 0644 file, a restored backup) is named with its fix. Only existing
 * files: new ones are made 0600 below, and SQLite gives -wal and -shm the database's mode.
 */
function checkExistingModes(filePath: string, looseModes: LooseFileModes): void {
  for (const file of [filePath, `${filePath}-wal`, `${filePath}-shm`]) {
    let mode: number;
    try {
      mode = fs.statSync(file).mode & 0o777;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    if ((mode & 0o077) === 0) continue;
    const problem = `database file ${file} is open to group or others (mode 0${mode.toString(8)}); fix: chmod 600 ${file}`;
    if (looseModes === 'refuse') throw new Error(`${problem} (refused in production)`);
    process.stderr.write(`gatehouse: warning: ${problem}\n`);
  }
}

/**
 * Opens the SQLite file, WAL so readers never wait on the writer. A missing folder is made
 * (0700) only with `createFolder`; without it, a `MissingFolderError`. A new folder is made 0700 and
 * a new database file 0600 (password hashes and session ids): SQLite gives its -wal and -shm
 * files the database file's mode. An existing file open to group or others is warned about, or
 * refused (`looseModes: 'refuse'`, production).
 */
export function openSqlite(
  filePath: string,
  log?: Logger,
  looseModes: LooseFileModes = 'warn',
  createFolder = true,
): { db: Kysely<Database>; sqlite: DatabaseSync; sqliteChecks?: SqliteSessionChecks } {
  if (filePath !== ':memory:') {
    checkExistingModes(filePath, looseModes);
    const folder = path.dirname(path.resolve(filePath));
    if (createFolder) fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    else if (!fs.existsSync(folder)) throw new MissingFolderError(folder);
    // 'a' creates the file if missing and never truncates one that exists.
    fs.closeSync(fs.openSync(filePath, 'a', 0o600));
  }
  const sqlite = new DatabaseSync(filePath, { timeout: openBusyTimeoutMs });
  sqlite.exec('pragma journal_mode = WAL');
  sqlite.exec('pragma synchronous = NORMAL');
  sqlite.exec('pragma foreign_keys = ON');
  sqlite.exec(`pragma busy_timeout = ${sqliteBusyTimeoutMs}`);
  const checks = filePath === ':memory:' ? undefined : openSessionChecks(filePath);
  let afterClose = () => {};
  const database = withStatementCache(sqlite, () => afterClose());
  const dialect = new LockWaitingSqliteDialect({ database });
  const db = new Kysely<Database>({ dialect, ...(log && { log }) });
  afterClose = () => {
    if (checks === undefined) return;
    checks.handle.close();
    // Closing a descriptor drops every POSIX lock this process holds on the file, SQLite's
    // too (https://www.sqlite.org/howtocorrupt.html, 2.2): the -shm descriptor goes last,
    // once no connection of this process, a prune's checkpoint worker included, has it open.
    void checkpointWorkersStopped(db).then(() => checks.commits.close());
  };
  markSqlite(db, filePath);
  return { db, sqlite, ...(checks !== undefined && { sqliteChecks: checks }) };
}

/**
 * The session check's own connection and the watch on the file's commits
 * (src/sessions/sqlite-checks-while-uncommitted.ts). Its own connection, because Kysely's runs
 * transactions that wait (for another process's lock, between statements): a check run on it
 * meanwhile would read that transaction's snapshot, older than a commit made since, or its
 * writes before they commit or roll back.
 */
export interface SqliteSessionChecks {
  handle: DatabaseSync;
  commits: SqliteCommitWatch;
}

function openSessionChecks(filePath: string): SqliteSessionChecks {
  const handle = new DatabaseSync(filePath, { timeout: openBusyTimeoutMs });
  handle.exec(`pragma busy_timeout = ${sqliteBusyTimeoutMs}`);
  // SQLite names the -shm file after the database's real path, symbolic links resolved.
  return { handle, commits: watchSqliteCommits(fs.realpathSync(filePath)) };
}
