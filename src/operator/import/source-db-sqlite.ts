import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { AuthjsSourceError, quote, type SourceDb, type SourceRow } from './source-db.js';

// The app may be writing as the import reads: wait for its lock this long rather than fail. A
// synchronous wait, which only the CLI's own process waits on.
const busyTimeoutMs = 5000;

/** The file a path, a `file:` URL (Prisma's `file:./dev.db`) or a `file://` URL names. */
function sqliteFile(url: string): string {
  if (url.startsWith('file://')) return fileURLToPath(new URL(url));
  if (url.startsWith('file:')) return url.slice('file:'.length).replace(/\?.*$/, '');
  return url;
}

/**
 * Opens a SQLite file read-only (a missing file is an error, never a new empty database) and
 * begins one read transaction: every page is read from the same snapshot, so a row the app
 * writes meanwhile is seen whole or not at all. In WAL mode the app's writers go on meanwhile;
 * in rollback-journal mode (SQLite's default) they wait until the import has read.
 */
export function openSqliteSource(url: string): SourceDb {
  const file = path.resolve(sqliteFile(url));
  if (!fs.existsSync(file)) throw new AuthjsSourceError(`no SQLite file at ${file}`);
  const sqlite = new DatabaseSync(file, { readOnly: true, timeout: busyTimeoutMs });
  sqlite.exec('begin');
  return {
    engine: 'sqlite',
    where: `sqlite ${file}`,
    async tables() {
      const rows = sqlite
        .prepare(
          `select m.name as "table", p.name as "column"
           from sqlite_schema m join pragma_table_info(m.name) p
           where m.type in ('table', 'view') and m.name not like 'sqlite\\_%' escape '\\'`,
        )
        .all() as Array<{ table: string; column: string }>;
      const tables = new Map<string, Set<string>>();
      for (const row of rows) {
        const columns = tables.get(row.table) ?? new Set<string>();
        columns.add(row.column);
        tables.set(row.table, columns);
      }
      return tables;
    },
    table: quote,
    // Numbered (`?1`), so a statement may name a parameter out of order.
    parameter: (n) => `?${n}`,
    // A list goes in as one JSON array parameter: no statement text per list length.
    oneOf: (column, n) => `${column} in (select value from json_each(?${n}))`,
    async all(statement, parameters) {
      const values: SQLInputValue[] = parameters.map((value) =>
        Array.isArray(value) ? JSON.stringify(value) : value,
      );
      return sqlite.prepare(statement).all(...values) as SourceRow[];
    },
    async close() {
      // Closing ends the read transaction; nothing was written.
      sqlite.close();
    },
  };
}
