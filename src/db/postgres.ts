import { createRequire } from 'node:module';
import { Kysely, PostgresDialect, type Logger } from 'kysely';
import type PgModule from 'pg';
import type { Pool as PgPool } from 'pg';
import type { Database } from './schema.js';

// Loaded only when PostgreSQL is chosen: the SQLite default starts without it.
const require = createRequire(import.meta.url);

/** A statement running longer than this is cancelled by the server. */
export const statementTimeoutMs = 5000;

// Server-side ends of a connection: admin_shutdown, crash_shutdown, cannot_connect_now.
const connectionEndCodes = new Set(['57P01', '57P02', '57P03']);

/**
 * Whether a query failed because its pooled connection was already gone (the server ended it,
 * or its socket closed) before the statement could run: the same statement on a new connection
 * may well succeed. A pool can hand out such a connection when the server ends it an instant
 * before the request, before the socket's close has reached this process.
 */
export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (connectionEndCodes.has(code) || code === 'ECONNRESET' || code === 'EPIPE')
  )
    return true;
  return /Connection terminated|Client has encountered a connection error|not queryable/.test(
    error.message,
  );
}

/**
 * A pooled PostgreSQL connection; queries time out so a stuck server cannot hold requests. The
 * pool is returned too, for named (server-side prepared) statements on hot paths.
 *
 * The server-side timeout is a `SET` on each new connection, not a startup parameter: poolers
 * (PgBouncer, with its stock settings) refuse unknown startup parameters. Behind a pooler in
 * transaction mode the `SET` reaches one server connection only, so the client-side
 * `query_timeout` is the deadline that always holds.
 */
export function openPostgres(
  connectionString: string,
  log?: Logger,
): { db: Kysely<Database>; pool: PgPool } {
  const pg = require('pg') as typeof PgModule;
  // bigint columns hold millisecond timestamps, well inside Number's exact range.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    connectionTimeoutMillis: 3000,
    query_timeout: statementTimeoutMs + 1000,
  });
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor may a checked-out client's (killed mid-transaction, or under a running query): pg-pool
  // listens only while a client is idle, and an unheard 'error' event ends the process. The
  // query in flight fails by itself, and on release the pool drops the broken client.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    // Queued before the client's first query; a failure surfaces on that query.
    client.query(`set statement_timeout = ${statementTimeoutMs}`).catch(() => undefined);
  });
  const dialect = new PostgresDialect({ pool });
  return { db: new Kysely<Database>({ dialect, ...(log && { log }) }), pool };
}
