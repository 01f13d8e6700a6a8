import type { Database as SQLiteDatabase } from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Pool as PgPool } from 'pg';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite.js';

export type Dialect = 'sqlite' | 'postgres';

export interface OpenDatabase {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The raw SQLite handle, for prepared statements on hot paths. */
  sqlite?: SQLiteDatabase;
  /** The PostgreSQL pool behind `db`, for named prepared statements on hot paths. */
  pgPool?: PgPool;
}

/** Chooses the backend from the URL: `file:<path>` is SQLite, `postgres://` PostgreSQL. */
export function openDatabase(url: string): OpenDatabase {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { db, pool } = openPostgres(url);
    return { db, dialect: 'postgres', pgPool: pool };
  }
  return { ...openSqlite(url.replace(/^file:/, '')), dialect: 'sqlite' };
}
