import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import pg from 'pg';
import {
  drizzlePostgres,
  drizzleSqlite,
  kyselyPostgres,
  kyselySqlite,
  prismaPostgres,
  prismaSqlite,
} from './authjs-ddl.js';
import { createTestDatabase, hasPostgres } from './postgres.js';

/*
 * Auth.js apps' databases as each adapter's own migrations leave them, for the import of an
 * Auth.js database (adoption spec §3). The statements are those the adapters' tooling writes
 * (github.com/nextauthjs/next-auth):
 * - Prisma on SQLite: `prisma migrate` from packages/adapter-prisma/prisma/schema.prisma, with
 *   Prisma's `_prisma_migrations`; DateTime kept as epoch milliseconds (Prisma's own engine).
 * - Prisma on PostgreSQL: the Prisma guide's schema (docs/pages/getting-started/adapters/
 *   prisma.mdx), which adds `createdAt` and `updatedAt`; DateTime is `timestamp(3)`.
 * - Drizzle: `drizzle-kit generate` from packages/adapter-drizzle/src/lib/sqlite.ts and pg.ts;
 *   `emailVerified` integer `timestamp_ms` on SQLite, `timestamp` on PostgreSQL; email nullable.
 * - Kysely: the guide's migration (docs/pages/getting-started/adapters/kysely.mdx: uuid ids,
 *   timestamptz) on PostgreSQL; on SQLite the adapter's own test tables
 *   (packages/adapter-kysely/test/index.test.ts), its dates ISO text (`format.to`); with the
 *   Kysely Migrator's table. No authenticator table: that adapter keeps no passkeys.
 */

export type FixtureEngine = 'sqlite' | 'postgres';

export interface AuthjsSchema {
  /** `Prisma on SQLite`: a test's name. */
  name: string;
  adapter: 'prisma' | 'drizzle' | 'kysely';
  engine: FixtureEngine;
  ddl: string;
  users: string;
  accounts: string;
  authenticators: string | null;
  /** Users (and accounts) carry `createdAt` and `updatedAt` (the Prisma guide's schema). */
  datedRows: boolean;
  /** A date as the adapter writes it into this schema's date columns. */
  date(value: Date): string | number;
}

const epochMs = (value: Date) => value.getTime();
const isoText = (value: Date) => value.toISOString();
const prismaTables = { users: 'User', accounts: 'Account', authenticators: 'Authenticator' };
const drizzleTables = { users: 'user', accounts: 'account', authenticators: 'authenticator' };

export const authjsSchemas: AuthjsSchema[] = [
  {
    name: 'Prisma on SQLite',
    adapter: 'prisma',
    engine: 'sqlite',
    ddl: prismaSqlite,
    ...prismaTables,
    datedRows: false,
    date: epochMs,
  },
  {
    name: 'Prisma on PostgreSQL',
    adapter: 'prisma',
    engine: 'postgres',
    ddl: prismaPostgres,
    ...prismaTables,
    datedRows: true,
    date: isoText,
  },
  {
    name: 'Drizzle on SQLite',
    adapter: 'drizzle',
    engine: 'sqlite',
    ddl: drizzleSqlite,
    ...drizzleTables,
    datedRows: false,
    date: epochMs,
  },
  {
    name: 'Drizzle on PostgreSQL',
    adapter: 'drizzle',
    engine: 'postgres',
    ddl: drizzlePostgres,
    ...drizzleTables,
    datedRows: false,
    date: isoText,
  },
  {
    name: 'Kysely on SQLite',
    adapter: 'kysely',
    engine: 'sqlite',
    ddl: kyselySqlite,
    ...prismaTables,
    authenticators: null,
    datedRows: false,
    date: isoText,
  },
  {
    name: 'Kysely on PostgreSQL',
    adapter: 'kysely',
    engine: 'postgres',
    ddl: kyselyPostgres,
    ...prismaTables,
    authenticators: null,
    datedRows: false,
    date: isoText,
  },
];

export function authjsSchema(
  adapter: AuthjsSchema['adapter'],
  engine: FixtureEngine,
): AuthjsSchema {
  const schema = authjsSchemas.find((s) => s.adapter === adapter && s.engine === engine);
  if (schema === undefined) throw new Error(`no schema for ${adapter} on ${engine}`);
  return schema;
}

/** Whether a fixture on `engine` can be made here (PostgreSQL: under scripts/with-postgres.sh). */
export const engineAvailable = (engine: FixtureEngine) => engine === 'sqlite' || hasPostgres;

export type SqlValue = string | number | boolean | null;

/**
 * An empty database of its own: a SQLite file in a fresh folder (foreign keys enforced unless
 * `foreignKeys: false`, as an app that never turned them on), or a fresh PostgreSQL database.
 */
export interface FixtureDb {
  engine: FixtureEngine;
  url: string;
  /** Runs statements (several, `;`-separated, when there are no parameters). */
  run(statement: string, parameters?: SqlValue[]): Promise<void>;
  insert(table: string, row: Record<string, SqlValue>): Promise<void>;
  close(): Promise<void>;
}

async function sqliteFixture(foreignKeys: boolean): Promise<FixtureDb> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-authjs-'));
  const file = path.join(dir, 'app.db');
  const sqlite = new DatabaseSync(file, { enableForeignKeyConstraints: foreignKeys });
  const run = async (statement: string, parameters: SqlValue[] = []) => {
    if (parameters.length === 0) sqlite.exec(statement);
    else
      sqlite
        .prepare(statement)
        .run(
          ...parameters.map((value): SQLInputValue =>
            typeof value === 'boolean' ? Number(value) : value,
          ),
        );
  };
  return {
    engine: 'sqlite',
    url: `file:${file}`,
    run,
    insert: (table, row) =>
      run(
        insertStatement(table, row, () => '?'),
        Object.values(row),
      ),
    async close() {
      sqlite.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresFixture(): Promise<FixtureDb> {
  const database = await createTestDatabase();
  const client = new pg.Client({ connectionString: database.url });
  client.on('error', () => undefined);
  await client.connect();
  const run = async (statement: string, parameters: SqlValue[] = []) => {
    await client.query(statement, parameters.length === 0 ? undefined : parameters);
  };
  return {
    engine: 'postgres',
    url: database.url,
    run,
    insert: (table, row) =>
      run(
        insertStatement(table, row, (n) => `$${n}`),
        Object.values(row),
      ),
    async close() {
      await client.end();
      await database.drop();
    },
  };
}

function insertStatement(
  table: string,
  row: Record<string, SqlValue>,
  parameter: (n: number) => string,
) {
  const names = Object.keys(row).map((name) => `"${name}"`);
  const values = names.map((_, index) => parameter(index + 1));
  return `insert into "${table}" (${names.join(', ')}) values (${values.join(', ')})`;
}

export function createFixtureDb(engine: FixtureEngine, options: { foreignKeys?: boolean } = {}) {
  return engine === 'sqlite' ? sqliteFixture(options.foreignKeys ?? true) : postgresFixture();
}

export interface FixtureUser {
  id: string;
  email: string | null;
  name?: string | null;
  emailVerified?: Date | null;
  createdAt?: Date;
}

export interface FixtureAccount {
  userId: string;
  type: string;
  provider: string;
  providerAccountId: string;
}

export interface FixtureAuthenticator {
  userId: string;
  credentialID: string;
  credentialPublicKey: string;
  counter: number;
  credentialBackedUp: boolean;
  transports: string | null;
}

/** An Auth.js app's database: a schema's tables, and rows written as its adapter writes them. */
export interface AuthjsFixture {
  schema: AuthjsSchema;
  db: FixtureDb;
  addUser(user: FixtureUser): Promise<void>;
  addAccount(account: FixtureAccount): Promise<void>;
  addAuthenticator(authenticator: FixtureAuthenticator): Promise<void>;
}

const updatedAt = new Date('2025-01-01T00:00:00.000Z');

export async function authjsFixture(
  schema: AuthjsSchema,
  options: { foreignKeys?: boolean } = {},
): Promise<AuthjsFixture> {
  const db = await createFixtureDb(schema.engine, options);
  await db.run(schema.ddl);
  const dated = (createdAt: Date | undefined): Record<string, SqlValue> =>
    schema.datedRows
      ? { createdAt: schema.date(createdAt ?? updatedAt), updatedAt: schema.date(updatedAt) }
      : {};
  return {
    schema,
    db,
    async addUser(user) {
      const verified = user.emailVerified ?? null;
      await db.insert(schema.users, {
        id: user.id,
        email: user.email,
        name: user.name ?? null,
        emailVerified: verified === null ? null : schema.date(verified),
        ...dated(user.createdAt),
      });
    },
    async addAccount(account) {
      await db.insert(schema.accounts, { ...account, ...dated(undefined) });
    },
    async addAuthenticator(authenticator) {
      if (schema.authenticators === null) throw new Error(`${schema.name} keeps no authenticators`);
      await db.insert(schema.authenticators, {
        ...authenticator,
        providerAccountId: authenticator.credentialID,
        credentialDeviceType: authenticator.credentialBackedUp ? 'multiDevice' : 'singleDevice',
      });
    },
  };
}
