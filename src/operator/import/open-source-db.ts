import { isPostgresUrl, type SourceDb } from './source-db.js';
import { openPostgresSource } from './source-db-postgres.js';
import { openSqliteSource } from './source-db-sqlite.js';

/**
 * Opens another service's database read-only, inside one read snapshot: `postgres://` and
 * `postgresql://` are PostgreSQL, anything else a SQLite file (a path or a `file:` URL).
 */
export async function openSourceDb(url: string): Promise<SourceDb> {
  return isPostgresUrl(url) ? openPostgresSource(url) : openSqliteSource(url);
}
