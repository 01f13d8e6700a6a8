import { createRequire } from 'node:module';
import type PgModule from 'pg';
import { postgresTarget } from '../../db/open.js';
import { AuthjsSourceError, quote, type SourceDb, type SourceRow } from './source-db.js';

// Loaded only for a PostgreSQL source, as src/db/postgres.ts loads it.
const require = createRequire(import.meta.url);

/**
 * The schema a URL names the way Prisma's do (`?schema=app`), taken out of the URL (it is no
 * connection parameter); null when it names none, and then the connection's current schema.
 */
function splitSchema(url: string): { url: string; schema: string | null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // A URL pg may still read (an unescaped character in the password) but URL cannot.
    return { url, schema: null };
  }
  const schema = parsed.searchParams.get('schema');
  if (schema === null) return { url, schema: null };
  parsed.searchParams.delete('schema');
  return { url: parsed.toString(), schema };
}

/**
 * Timestamps, dates and bigints as the server writes them: node-postgres would read a
 * `timestamp` (no zone, Prisma's and Drizzle's, holding UTC) in this machine's zone, and it
 * parses these types the same for every client of the process (src/db/postgres.ts sets bigint's).
 */
function rawTypes(pg: typeof PgModule): PgModule.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  const { TIMESTAMP, TIMESTAMPTZ, DATE, INT8 } = pg.types.builtins;
  for (const oid of [TIMESTAMP, TIMESTAMPTZ, DATE, INT8]) types.setTypeParser(oid, (text) => text);
  return types;
}

/**
 * One connection, in one read-only repeatable-read transaction: every page is read from the
 * same snapshot, so a row the app writes meanwhile is seen whole or not at all, and the app's
 * writers never wait on the import.
 */
export async function openPostgresSource(url: string): Promise<SourceDb> {
  const pg = require('pg') as typeof PgModule;
  const target = splitSchema(url);
  const client = new pg.Client({ connectionString: target.url, types: rawTypes(pg) });
  // A server-side end must not become an uncaught 'error' event; the query in flight fails.
  client.on('error', () => undefined);
  await client.connect();
  try {
    // ISO dates and UTC offsets whatever the server's or the role's settings.
    await client.query(`set datestyle = 'ISO, YMD'`);
    await client.query(`set time zone 'UTC'`);
    await client.query('begin isolation level repeatable read read only');
    const current = await client.query<{ schema: string | null }>(
      'select current_schema() as schema',
    );
    const schema = target.schema ?? current.rows[0]?.schema ?? null;
    if (schema === null) throw new AuthjsSourceError('the connection has no current schema');
    const { host, port, database } = postgresTarget(url);
    return sourceOn(client, schema, `postgresql ${host}:${port}/${database} (schema "${schema}")`);
  } catch (error) {
    await client.end();
    throw error;
  }
}

function sourceOn(client: PgModule.Client, schema: string, where: string): SourceDb {
  return {
    engine: 'postgres',
    where,
    async tables() {
      const result = await client.query<{ table: string; column: string }>(
        `select table_name as "table", column_name as "column"
         from information_schema.columns where table_schema = $1`,
        [schema],
      );
      const tables = new Map<string, Set<string>>();
      for (const row of result.rows) {
        const columns = tables.get(row.table) ?? new Set<string>();
        columns.add(row.column);
        tables.set(row.table, columns);
      }
      return tables;
    },
    table: (name) => `${quote(schema)}.${quote(name)}`,
    parameter: (n) => `$${n}`,
    // The server infers the array's element type from the column's (text, or uuid as the
    // Kysely adapter's ids are), so the column is compared as it is and its index serves.
    oneOf: (column, n) => `${column} = any($${n})`,
    async all(statement, parameters) {
      const result = await client.query<SourceRow>(statement, [...parameters]);
      return result.rows;
    },
    async close() {
      // Ending the connection ends the read-only transaction; nothing was written.
      await client.end();
    },
  };
}
