import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeEach } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase, type Dialect } from '../../src/db/open.js';
import type { Database } from '../../src/db/schema.js';
import { createTestDatabase, hasPostgres } from './postgres.js';

/** Where a store test runs: PostgreSQL only when TEST_POSTGRES_URL is set, else skipped. */
export interface DatabaseBackend {
  name: string;
  dialect: Dialect;
  skip: boolean;
  /** Named prepared statements: off behind PgBouncer in transaction mode. */
  prepared?: boolean;
  create(): Promise<{ url: string; dispose(): Promise<void> }>;
}

/** A fresh SQLite file in a folder of its own (named after `label`), or a fresh PostgreSQL database. */
export function databaseBackends(label: string): DatabaseBackend[] {
  return [
    {
      name: 'SQLite',
      dialect: 'sqlite',
      skip: false,
      async create() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-${label}-`));
        return {
          url: `file:${path.join(dir, `${label}.db`)}`,
          dispose: async () => fs.rmSync(dir, { recursive: true, force: true }),
        };
      },
    },
    {
      name: 'PostgreSQL',
      dialect: 'postgres',
      skip: !hasPostgres,
      async create() {
        const database = await createTestDatabase();
        return { url: database.url, dispose: () => database.drop() };
      },
    },
  ];
}

/** A backend's fresh database, migrated to the latest schema, and how to close and drop it. */
export async function openMigrated(
  backend: Pick<DatabaseBackend, 'create'>,
): Promise<{ db: Kysely<Database>; dialect: Dialect; close(): Promise<void> }> {
  const created = await backend.create();
  const { db, dialect } = openDatabase(created.url);
  await migrateToLatest(db);
  return {
    db,
    dialect,
    close: async () => {
      await db.destroy();
      await created.dispose();
    },
  };
}

/**
 * A fresh migrated database for each test of the describe block it is called in (each test's
 * tables start empty), closed and dropped after; the function answers the current test's.
 */
export function databasePerTest(backend: Pick<DatabaseBackend, 'create' | 'skip'>) {
  let opened: Awaited<ReturnType<typeof openMigrated>> | undefined;
  beforeEach(async () => {
    if (backend.skip) return;
    await opened?.close();
    opened = await openMigrated(backend);
  });
  afterAll(async () => {
    await opened?.close();
  });
  return (): Kysely<Database> => {
    if (opened === undefined) throw new Error('no database: the test is skipped');
    return opened.db;
  };
}
