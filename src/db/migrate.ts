import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as initial from './migrations/001-initial.js';
import type { Database } from './schema.js';

// Migrations are imported statically so the compiled service needs no file-system scan.
const migrations: Record<string, Migration> = {
  '001-initial': initial,
};

const provider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};

const latest = Object.keys(migrations).sort().at(-1) as string;

/** One read instead of the Migrator's lock-and-compare round trips when nothing is pending. */
async function isUpToDate(db: Kysely<Database>): Promise<boolean> {
  try {
    const row = await sql<{ name: string }>`select max(name) as name from kysely_migration`.execute(
      db,
    );
    return row.rows[0]?.name === latest;
  } catch {
    // No migration table yet: a new database.
    return false;
  }
}

/**
 * Brings the schema to the latest version; throws with the failing migration's name. Safe when
 * several replicas start at once on one database: Kysely's Migrator runs the migrations in one
 * transaction under an advisory lock on PostgreSQL (the write lock on SQLite), re-reads what
 * was applied once it holds the lock, and tolerates losing the race to create its own tables
 * (test/postgres-replicas-start.test.ts).
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  if (await isUpToDate(db)) return;
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined) {
    const name = failed?.migrationName ?? 'unknown';
    throw new Error(`database migration ${name} failed`, { cause: error });
  }
}
