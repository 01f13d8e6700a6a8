import path from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { Kysely, LogEvent } from 'kysely';
import type { Pool as PgPool } from 'pg';
import { openPostgres } from './postgres.js';
import type { Database } from './schema.js';
import { openSqlite, type SqliteSessionChecks } from './sqlite.js';

export type Dialect = 'sqlite' | 'postgres';

/** The raw handle behind the Kysely instance (one of the two), for statements on hot paths. */
export interface RawHandles {
  sqlite?: DatabaseSync;
  /** The session check's own SQLite connection and the watch on the file's commits. */
  sqliteChecks?: SqliteSessionChecks;
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
  /**
   * Make a SQLite file's missing folder (default true). False for an explicit DATABASE_URL:
   * then a missing folder is a `MissingFolderError`, not a new empty database somewhere.
   */
  createFolder?: boolean;
}

/** Where a PostgreSQL URL points, without its user, password or query (for messages). */
export function postgresTarget(url: string): { host: string; port: string; database: string } {
  // `user@/db?host=/run/postgresql` (a socket) has no host, which URL refuses with a user.
  const noHost = 'no-host.invalid';
  try {
    const parsed = new URL(url.replace(/@\//, `@${noHost}/`));
    const named = parsed.hostname === noHost ? '' : parsed.hostname;
    const host = named || parsed.searchParams.get('host') || 'localhost';
    const database =
      decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username);
    return { host, port: parsed.port || '5432', database };
  } catch {
    // A URL pg may still read (an unescaped character in the password) but URL cannot.
    return { host: '(host not shown)', port: '(port not shown)', database: '(database not shown)' };
  }
}

/** The store as the start-up line names it: `sqlite /abs/file.db`, `postgresql host:port/db`. */
export function describeStore(url: string): string {
  if (isPostgresUrl(url)) {
    const { host, port, database } = postgresTarget(url);
    return `postgresql ${host}:${port}/${database}`;
  }
  const file = url.replace(/^file:/, '');
  return `sqlite ${file === ':memory:' ? file : path.resolve(file)}`;
}

export function isPostgresUrl(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
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
  if (isPostgresUrl(url)) {
    const { db, pool } = openPostgres(url, log);
    return { db, dialect: 'postgres', pgPool: pool };
  }
  const looseModes = options.production === true ? 'refuse' : 'warn';
  const file = url.replace(/^file:/, '');
  return {
    ...openSqlite(file, log, looseModes, options.createFolder !== false),
    dialect: 'sqlite',
  };
}
