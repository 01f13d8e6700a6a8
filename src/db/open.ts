import type { DatabaseSync } from 'node:sqlite';
import type { Kysely, LogEvent } from 'kysely';
import type { Pool as PgPool } from 'pg';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { openSqlite } from './sqlite.js';

export type Dialect = 'sqlite' | 'postgres';

/** The raw handle behind the Kysely instance (one of the two), for statements on hot paths. */
export interface RawHandles {
  sqlite?: DatabaseSync;
  /** Its PostgreSQL pool, for named prepared statements. */
  pgPool?: PgPool;
}

export interface OpenDatabase extends RawHandles {
  db: Kysely<Database>;
  dialect: Dialect;
}

export interface OpenOptions {
  /** Told of every statement run through Kysely that fails (metrics). */
  onQueryError?: () => void;
  /** Production: an existing SQLite file open to group or others stops the start. */
  production?: boolean;
}

/** Chooses the backend from the URL: `file:<path>` is SQLite, `postgres://` PostgreSQL. */
export function openDatabase(url: string, options: OpenOptions = {}): OpenDatabase {
  const onQueryError = options.onQueryError;
  // Kysely calls a log function for every query; only its failures are wanted.
  const log =
    onQueryError === undefined
      ? undefined
      : (event: LogEvent) => {
          if (event.level === 'error') onQueryError();
        };
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { db, pool } = openPostgres(url, log);
    return { db, dialect: 'postgres', pgPool: pool };
  }
  const looseModes = options.production === true ? 'refuse' : 'warn';
  return { ...openSqlite(url.replace(/^file:/, ''), log, looseModes), dialect: 'sqlite' };
}
