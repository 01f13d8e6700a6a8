/*
 * Another service's database, read-only, on SQLite or PostgreSQL: the few things an import asks
 * of it. Not Kysely: the tables are another app's, their names known only once read, and raw
 * statements over quoted names say what is read more plainly than an untyped query builder.
 */

export type SourceRow = Record<string, unknown>;

export interface SourceDb {
  engine: 'sqlite' | 'postgres';
  /** Where it is, for messages: `sqlite /abs/app.db`, `postgresql host:5432/app (schema "public")`. */
  where: string;
  /** Every table and view the import may read, with its columns. */
  tables(): Promise<Map<string, Set<string>>>;
  /** The table as a statement names it: quoted, and schema-qualified on PostgreSQL. */
  table(name: string): string;
  /** The `n`th parameter (1-based) of a statement. */
  parameter(n: number): string;
  /** A condition: `column` (already quoted) is one of the strings of list parameter `n`. */
  oneOf(column: string, n: number): string;
  /** Runs a query; a list parameter is given as an array. */
  all(
    statement: string,
    parameters: ReadonlyArray<string | number | string[]>,
  ): Promise<SourceRow[]>;
  close(): Promise<void>;
}

/** An identifier quoted for SQLite and PostgreSQL alike. */
export function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A problem with the source itself (no such file, no Auth.js tables): the CLI exits 2 with it. */
export class AuthjsSourceError extends Error {
  override name = 'AuthjsSourceError';
}

export function isPostgresUrl(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}
