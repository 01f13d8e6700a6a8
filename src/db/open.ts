import type { Database as SQLiteDatabase } from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite.js';

export type Dialect = 'sqlite' | 'postgres';

export interface OpenDatabase {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The raw SQLite handle, for prepared statements on hot paths. */
  sqlite?: SQLiteDatabase;
}

/** Chooses the backend from the URL: `file:<path>` is SQLite, `postgres://` PostgreSQL. */
export function openDatabase(url: string): OpenDatabase {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { db: openPostgres(url), dialect: 'postgres' };
  }
  return { ...openSqlite(url.replace(/^file:/, '')), dialect: 'sqlite' };
}
