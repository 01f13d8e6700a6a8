import { createRequire } from 'node:module';
import type { DatabaseSync } from 'node:sqlite';
import type { Pool } from 'pg';
import { isPostgresUrl, postgresTarget } from '../../db/open.js';

const require = createRequire(import.meta.url);

/** A database that cannot be opened or read as the import needs: its message says why. */
export class ForeignDatabaseError extends Error {}

/** Another app's database, read only: its tables and columns, and rows by a query. */
export interface ForeignDatabase {
  engine: 'sqlite' | 'postgres';
  tables(): Promise<string[]>;
  columns(table: string): Promise<string[]>;
  /** Rows of `sql`, whose parameters are written `?` (numbered for PostgreSQL here). */
  all(sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** A name as an SQL identifier, quoted (the adapters' tables are `"User"`, `user`, …). */
export const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Opens another app's database read only: a SQLite file (`file:./prisma/dev.db`, or a path),
 * or a PostgreSQL URL. A missing SQLite file is an error naming it, never a new empty file.
 */
export async function openForeignDatabase(url: string): Promise<ForeignDatabase> {
  if (isPostgresUrl(url)) {
    const { Pool: PgPool } = require('pg') as { Pool: new (options: object) => Pool };
    const pool = new PgPool({ connectionString: url, max: 1 });
    const all = async (sql: string, params: readonly unknown[]) => {
      let n = 0;
      const numbered = sql.replace(/\?/g, () => `$${(n += 1)}`);
      return (await pool.query(numbered, [...params])).rows as Record<string, unknown>[];
    };
    // Read only: nothing this import does may change the old app's data.
    try {
      await pool.query('set default_transaction_read_only = on');
    } catch (error) {
      await pool.end().catch(() => undefined);
      const { host, port, database } = postgresTarget(url);
      throw new ForeignDatabaseError(
        `cannot read the PostgreSQL database ${database} at ${host}:${port}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return {
      engine: 'postgres',
      tables: async () =>
        (
          await all(
            'select table_name as name from information_schema.tables where table_schema = current_schema()',
            [],
          )
        ).map((row) => String(row.name)),
      columns: async (table) =>
        (
          await all(
            'select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ?',
            [table],
          )
        ).map((row) => String(row.name)),
      all,
      close: () => pool.end(),
    };
  }
  const sqlite = require('node:sqlite') as { DatabaseSync: typeof DatabaseSync };
  const file = url.replace(/^file:/, '');
  let db: DatabaseSync;
  try {
    db = new sqlite.DatabaseSync(file, { readOnly: true });
  } catch (error) {
    throw new ForeignDatabaseError(
      `cannot open the SQLite file ${file}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const all = (sql: string, params: readonly unknown[]) =>
    Promise.resolve(
      db.prepare(sql).all(...(params as Array<string | number | null>)) as Record<
        string,
        unknown
      >[],
    );
  return {
    engine: 'sqlite',
    tables: async () =>
      (await all("select name from sqlite_master where type = 'table'", [])).map((row) =>
        String(row.name),
      ),
    columns: async (table) =>
      (await all(`pragma table_info(${quoted(table)})`, [])).map((row) => String(row.name)),
    all,
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}
