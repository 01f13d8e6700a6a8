import { createRequire } from 'node:module';
import { Kysely, PostgresDialect } from 'kysely';
import type PgModule from 'pg';
import type { Pool as PgPool } from 'pg';
import type { Database } from './schema.js';

// Loaded only when PostgreSQL is chosen: the SQLite default starts without it.
const require = createRequire(import.meta.url);

/**
 * A pooled PostgreSQL connection; queries time out so a stuck server cannot hold requests. The
 * pool is returned too, for named (server-side prepared) statements on hot paths.
 */
export function openPostgres(connectionString: string): { db: Kysely<Database>; pool: PgPool } {
  const pg = require('pg') as typeof PgModule;
  // bigint columns hold millisecond timestamps, well inside Number's exact range.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    connectionTimeoutMillis: 3000,
    statement_timeout: 5000,
    query_timeout: 6000,
  });
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor may a checked-out client's (killed mid-transaction, or under a running query): pg-pool
  // listens only while a client is idle, and an unheard 'error' event ends the process. The
  // query in flight fails by itself, and on release the pool drops the broken client.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), pool };
}
