// The PostgreSQL the bench reads sessions from: the throw-away server scripts/with-postgres.sh
// starts (TEST_POSTGRES_URL), a database of the bench's own in it, dropped at cleanup, and the
// pids of the server processes serving that database (for their CPU time).
import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import { BenchError } from './common.ts';
import { onCleanup } from './processes.ts';

/** Set by scripts/with-postgres.sh; unset when PostgreSQL is not installed. */
export const postgresUrl = process.env.TEST_POSTGRES_URL || undefined;

/** Runs `work` on one short-lived connection (not a pool), closed afterwards. */
async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  // Loaded only when there is a PostgreSQL to talk to.
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  // A server-side disconnect must not become an uncaught 'error' event.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw new BenchError(`PostgreSQL at ${url} refused a connection: ${(error as Error).message}`);
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A new, empty database on the server at `adminUrl`, dropped by `cleanup()` (after the servers
 * using it have stopped). Returns its URL, its name and the server's version.
 */
export async function createBenchDatabase(
  adminUrl: string,
): Promise<{ url: string; name: string; version: string }> {
  // Lower-case letters and digits only: safe to splice into the statement unquoted.
  const name = `gatehouse_bench_${randomBytes(6).toString('hex')}`;
  const version = await withClient(adminUrl, async (client) => {
    await client.query(`create database ${name}`);
    const { rows } = await client.query<{ server_version: string }>('show server_version');
    return rows[0].server_version;
  });
  onCleanup(() =>
    withClient(adminUrl, async (client) => {
      await client.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1',
        [name],
      );
      await client.query(`drop database if exists ${name}`);
    }),
  );
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, version };
}

/** The server processes (one per connection) now serving `database`. */
export function backendPids(adminUrl: string, database: string): Promise<number[]> {
  return withClient(adminUrl, async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [database],
    );
    return rows.map((row) => row.pid);
  });
}
