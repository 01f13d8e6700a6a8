import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import pg from 'pg';
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

const prismaSqlite = `
CREATE TABLE "_prisma_migrations" (
    "id" TEXT PRIMARY KEY NOT NULL,
    "checksum" TEXT NOT NULL,
    "finished_at" DATETIME,
    "migration_name" TEXT NOT NULL,
    "logs" TEXT,
    "rolled_back_at" DATETIME,
    "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0
);
CREATE TABLE "User" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT,
    "email" TEXT NOT NULL,
    "emailVerified" DATETIME,
    "image" TEXT
);
CREATE TABLE "Account" (
    "userId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "providerAccountId" TEXT NOT NULL,
    "refresh_token" TEXT,
    "access_token" TEXT,
    "expires_at" INTEGER,
    "token_type" TEXT,
    "scope" TEXT,
    "id_token" TEXT,
    "session_state" TEXT,

    PRIMARY KEY ("provider", "providerAccountId"),
    CONSTRAINT "Account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE "Session" (
    "sessionToken" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "expires" DATETIME NOT NULL,
    CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE "VerificationToken" (
    "identifier" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "expires" DATETIME NOT NULL,

    PRIMARY KEY ("identifier", "token")
);
CREATE TABLE "Authenticator" (
    "credentialID" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "providerAccountId" TEXT NOT NULL,
    "credentialPublicKey" TEXT NOT NULL,
    "counter" INTEGER NOT NULL,
    "credentialDeviceType" TEXT NOT NULL,
    "credentialBackedUp" BOOLEAN NOT NULL,
    "transports" TEXT,

    PRIMARY KEY ("userId", "credentialID"),
    CONSTRAINT "Authenticator_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");
CREATE UNIQUE INDEX "Session_sessionToken_key" ON "Session"("sessionToken");
CREATE UNIQUE INDEX "VerificationToken_token_key" ON "VerificationToken"("token");
CREATE UNIQUE INDEX "Authenticator_credentialID_key" ON "Authenticator"("credentialID");
`;

const prismaPostgres = `
CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "name" TEXT,
    "email" TEXT NOT NULL,
    "emailVerified" TIMESTAMP(3),
    "image" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);
CREATE TABLE "Account" (
    "userId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "providerAccountId" TEXT NOT NULL,
    "refresh_token" TEXT,
    "access_token" TEXT,
    "expires_at" INTEGER,
    "token_type" TEXT,
    "scope" TEXT,
    "id_token" TEXT,
    "session_state" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Account_pkey" PRIMARY KEY ("provider","providerAccountId")
);
CREATE TABLE "Session" (
    "sessionToken" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL
);
CREATE TABLE "VerificationToken" (
    "identifier" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "VerificationToken_pkey" PRIMARY KEY ("identifier","token")
);
CREATE TABLE "Authenticator" (
    "credentialID" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "providerAccountId" TEXT NOT NULL,
    "credentialPublicKey" TEXT NOT NULL,
    "counter" INTEGER NOT NULL,
    "credentialDeviceType" TEXT NOT NULL,
    "credentialBackedUp" BOOLEAN NOT NULL,
    "transports" TEXT,

    CONSTRAINT "Authenticator_pkey" PRIMARY KEY ("userId","credentialID")
);
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");
CREATE UNIQUE INDEX "Session_sessionToken_key" ON "Session"("sessionToken");
CREATE UNIQUE INDEX "Authenticator_credentialID_key" ON "Authenticator"("credentialID");
ALTER TABLE "Account" ADD CONSTRAINT "Account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Authenticator" ADD CONSTRAINT "Authenticator_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
`;

const drizzleSqlite = `
CREATE TABLE \`account\` (
	\`userId\` text NOT NULL,
	\`type\` text NOT NULL,
	\`provider\` text NOT NULL,
	\`providerAccountId\` text NOT NULL,
	\`refresh_token\` text,
	\`access_token\` text,
	\`expires_at\` integer,
	\`token_type\` text,
	\`scope\` text,
	\`id_token\` text,
	\`session_state\` text,
	PRIMARY KEY(\`provider\`, \`providerAccountId\`),
	FOREIGN KEY (\`userId\`) REFERENCES \`user\`(\`id\`) ON UPDATE no action ON DELETE cascade
);
CREATE TABLE \`authenticator\` (
	\`credentialID\` text NOT NULL,
	\`userId\` text NOT NULL,
	\`providerAccountId\` text NOT NULL,
	\`credentialPublicKey\` text NOT NULL,
	\`counter\` integer NOT NULL,
	\`credentialDeviceType\` text NOT NULL,
	\`credentialBackedUp\` integer NOT NULL,
	\`transports\` text,
	PRIMARY KEY(\`userId\`, \`credentialID\`),
	FOREIGN KEY (\`userId\`) REFERENCES \`user\`(\`id\`) ON UPDATE no action ON DELETE cascade
);
CREATE UNIQUE INDEX \`authenticator_credentialID_unique\` ON \`authenticator\` (\`credentialID\`);
CREATE TABLE \`session\` (
	\`sessionToken\` text PRIMARY KEY NOT NULL,
	\`userId\` text NOT NULL,
	\`expires\` integer NOT NULL,
	FOREIGN KEY (\`userId\`) REFERENCES \`user\`(\`id\`) ON UPDATE no action ON DELETE cascade
);
CREATE TABLE \`user\` (
	\`id\` text PRIMARY KEY NOT NULL,
	\`name\` text,
	\`email\` text,
	\`emailVerified\` integer,
	\`image\` text
);
CREATE UNIQUE INDEX \`user_email_unique\` ON \`user\` (\`email\`);
CREATE TABLE \`verificationToken\` (
	\`identifier\` text NOT NULL,
	\`token\` text NOT NULL,
	\`expires\` integer NOT NULL,
	PRIMARY KEY(\`identifier\`, \`token\`)
);
`;

const drizzlePostgres = `
CREATE TABLE "account" (
	"userId" text NOT NULL,
	"type" text NOT NULL,
	"provider" text NOT NULL,
	"providerAccountId" text NOT NULL,
	"refresh_token" text,
	"access_token" text,
	"expires_at" integer,
	"token_type" text,
	"scope" text,
	"id_token" text,
	"session_state" text,
	CONSTRAINT "account_provider_providerAccountId_pk" PRIMARY KEY("provider","providerAccountId")
);
CREATE TABLE "authenticator" (
	"credentialID" text NOT NULL,
	"userId" text NOT NULL,
	"providerAccountId" text NOT NULL,
	"credentialPublicKey" text NOT NULL,
	"counter" integer NOT NULL,
	"credentialDeviceType" text NOT NULL,
	"credentialBackedUp" boolean NOT NULL,
	"transports" text,
	CONSTRAINT "authenticator_userId_credentialID_pk" PRIMARY KEY("userId","credentialID"),
	CONSTRAINT "authenticator_credentialID_unique" UNIQUE("credentialID")
);
CREATE TABLE "session" (
	"sessionToken" text PRIMARY KEY NOT NULL,
	"userId" text NOT NULL,
	"expires" timestamp NOT NULL
);
CREATE TABLE "user" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text,
	"email" text,
	"emailVerified" timestamp,
	"image" text,
	CONSTRAINT "user_email_unique" UNIQUE("email")
);
CREATE TABLE "verificationToken" (
	"identifier" text NOT NULL,
	"token" text NOT NULL,
	"expires" timestamp NOT NULL,
	CONSTRAINT "verificationToken_identifier_token_pk" PRIMARY KEY("identifier","token")
);
ALTER TABLE "account" ADD CONSTRAINT "account_userId_user_id_fk" FOREIGN KEY ("userId") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;
ALTER TABLE "authenticator" ADD CONSTRAINT "authenticator_userId_user_id_fk" FOREIGN KEY ("userId") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;
ALTER TABLE "session" ADD CONSTRAINT "session_userId_user_id_fk" FOREIGN KEY ("userId") REFERENCES "public"."user"("id") ON DELETE cascade ON UPDATE no action;
`;

const kyselyMigrator = `
create table "kysely_migration" ("name" varchar(255) not null primary key, "timestamp" varchar(255) not null);
create table "kysely_migration_lock" ("id" varchar(255) not null primary key, "is_locked" integer default 0 not null);
`;

const kyselySqlite = `
create table "User" ("id" varchar primary key, "name" text, "email" text not null unique, "emailVerified" timestamptz default CURRENT_TIMESTAMP, "image" text);
create table "Account" ("userId" uuid not null references "User" ("id") on delete cascade, "type" text not null, "provider" text not null, "providerAccountId" text not null, "refresh_token" text, "access_token" text, "expires_at" bigint, "token_type" text, "scope" text, "id_token" text, "session_state" text);
create table "Session" ("userId" uuid not null references "User" ("id") on delete cascade, "sessionToken" text not null unique, "expires" timestamptz not null);
create table "VerificationToken" ("identifier" text not null, "token" text not null unique, "expires" timestamptz not null);
create index "Account_userId_index" on "Account" ("userId");
${kyselyMigrator}`;

const kyselyPostgres = `
create table "User" ("id" uuid default gen_random_uuid() primary key, "name" text, "email" text not null unique, "emailVerified" timestamptz, "image" text);
create table "Account" ("id" uuid default gen_random_uuid() primary key, "userId" uuid not null references "User" ("id") on delete cascade, "type" text not null, "provider" text not null, "providerAccountId" text not null, "refresh_token" text, "access_token" text, "expires_at" bigint, "token_type" text, "scope" text, "id_token" text, "session_state" text);
create table "Session" ("id" uuid default gen_random_uuid() primary key, "userId" uuid not null references "User" ("id") on delete cascade, "sessionToken" text not null unique, "expires" timestamptz not null);
create table "VerificationToken" ("identifier" text not null, "token" text not null unique, "expires" timestamptz not null);
create index "Account_userId_index" on "Account" ("userId");
create index "Session_userId_index" on "Session" ("userId");
${kyselyMigrator}`;

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
