import type { Kysely } from 'kysely';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite.js';

export type Dialect = 'sqlite' | 'postgres';

export interface OpenDatabase {
  db: Kysely<Database>;
  dialect: Dialect;
}

/** Chooses the backend from the URL: `file:<path>` is SQLite, `postgres://` PostgreSQL. */
export function openDatabase(url: string): OpenDatabase {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { db: openPostgres(url), dialect: 'postgres' };
  }
  return { db: openSqlite(url.replace(/^file:/, '')), dialect: 'sqlite' };
}
