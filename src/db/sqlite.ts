import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './schema.js';

// better-sqlite3 waits for a lock synchronously, stalling the event loop: keep the wait short.
// Our own process serialises on one connection; only another process (the CLI) competes.
export const sqliteBusyTimeoutMs = 250;

/** Opens (creating its folder) the SQLite file; WAL so readers never wait on the writer. */
export function openSqlite(filePath: string): { db: Kysely<Database>; sqlite: SQLite.Database } {
  if (filePath !== ':memory:')
    fs.mkdirSync(path.dirname(path.resolve(filePath)), { recursive: true });
  const sqlite = new SQLite(filePath, { timeout: sqliteBusyTimeoutMs });
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) }), sqlite };
}
