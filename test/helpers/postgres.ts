import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';

/**
 * The server `scripts/with-postgres.sh` started, or undefined: then every PostgreSQL suite is
 * reported as skipped rather than silently missing.
 */
export const testPostgresUrl: string | undefined = process.env.TEST_POSTGRES_URL || undefined;

export const hasPostgres = testPostgresUrl !== undefined;

/** `describe`, skipped (visibly, in the report) when TEST_POSTGRES_URL is not set. */
export const describeIfPostgres = describe.skipIf(!hasPostgres);

/** Runs `work` on one short-lived connection (not a pool), closed afterwards. */
export async function withPgClient<T>(url: string, work: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: url });
  // A server-side disconnect must not become an uncaught 'error' event.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  /** A postgres:// URL of a database no other test file uses. */
  url: string;
  name: string;
  /** Ends every connection to it and drops it. */
  drop(): Promise<void>;
}

function requireUrl(adminUrl: string | undefined): string {
  if (adminUrl === undefined) throw new Error('TEST_POSTGRES_URL is not set');
  return adminUrl;
}

/**
 * A fresh, empty database on the test server, so test files can run in parallel without
 * sharing tables. Call `drop()` in `afterAll`.
 */
export async function createTestDatabase(adminUrl = testPostgresUrl): Promise<TestDatabase> {
  const admin = requireUrl(adminUrl);
  // Lower-case letters and digits only: safe to splice into the statement unquoted.
  const name = `gh_${randomBytes(8).toString('hex')}`;
  await withPgClient(admin, (client) => client.query(`create database ${name}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      await withPgClient(admin, async (client) => {
        const version = await client.query<{ server_version_num: string }>(
          'show server_version_num',
        );
        if (Number(version.rows[0]?.server_version_num) >= 130000) {
          await client.query(`drop database if exists ${name} with (force)`);
          return;
        }
        // Before PostgreSQL 13: end the connections, and retry while they are going away.
        for (let attempt = 0; ; attempt += 1) {
          await client.query(
            'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1',
            [name],
          );
          try {
            await client.query(`drop database if exists ${name}`);
            return;
          } catch (error) {
            if (attempt >= 20) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      });
    },
  };
}

/** Ends every other connection to the database at `url`, as a server restart would. */
export async function terminateOtherConnections(url: string): Promise<number> {
  return withPgClient(url, async (client) => {
    const result = await client.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid()`,
    );
    return result.rowCount ?? 0;
  });
}
