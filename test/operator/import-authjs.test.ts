import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serviceDatabase,
  startAccountService,
  type AccountService,
} from '../account/account-service.js';
import { Client } from '../helpers/client.js';
import {
  createTestDatabase,
  hasPostgres,
  withPgClient,
  type TestDatabase,
} from '../helpers/postgres.js';
import { signInWithSoftPasskey, softPasskey } from '../helpers/soft-passkey.js';

const testRequire = createRequire(new URL('../package.json', import.meta.url));
const bcryptjs = testRequire('bcryptjs') as { hashSync(password: string, cost: number): string };
const password = 'the password in the old app';
const hash = bcryptjs.hashSync(password, 10);
const passkey = softPasskey();

// The adapters' default tables as their migrations make them (trimmed to the columns read, plus
// a few they have), the app's own password column added to the users table.
const prismaTables = (dates: string, bool: string) => [
  `create table "User" (id text primary key, name text, email text unique, "emailVerified" ${dates}, image text, password text, "createdAt" ${dates})`,
  `create table "Account" ("userId" text not null, type text not null, provider text not null, "providerAccountId" text not null, refresh_token text, access_token text, expires_at integer, token_type text, scope text, id_token text, session_state text, primary key (provider, "providerAccountId"))`,
  `create table "Session" ("sessionToken" text primary key, "userId" text not null, expires ${dates} not null)`,
  `create table "Authenticator" ("credentialID" text not null unique, "userId" text not null, "providerAccountId" text not null, "credentialPublicKey" text not null, counter integer not null, "credentialDeviceType" text not null, "credentialBackedUp" ${bool} not null, transports text, primary key ("userId", "credentialID"))`,
];
const drizzleTables = [
  'create table "user" (id text primary key, name text, email text unique, "emailVerified" integer, image text)',
  'create table "account" ("userId" text not null, type text not null, provider text not null, "providerAccountId" text not null, primary key (provider, "providerAccountId"))',
  'create table "credentials" ("userId" text primary key, hash text not null)',
];

/** The old app's rows: Ada with a password, a GitHub account and a passkey; Bo with GitHub only. */
const rows = (dates: (iso: string) => unknown, yes: unknown) =>
  [
    [
      'insert into "User" (id, name, email, "emailVerified", password, "createdAt") values (?, ?, ?, ?, ?, ?)',
      [
        'clx0ada0000001',
        'Ada',
        'Ada@Example.com',
        dates('2024-03-01T10:00:00.000Z'),
        hash,
        dates('2023-01-01T00:00:00.000Z'),
      ],
    ],
    [
      'insert into "User" (id, name, email) values (?, ?, ?)',
      ['clx0bo00000002', 'Bo', 'bo@example.com'],
    ],
    [
      'insert into "Account" ("userId", type, provider, "providerAccountId") values (?, ?, ?, ?)',
      ['clx0ada0000001', 'oauth', 'github', '1001'],
    ],
    [
      'insert into "Account" ("userId", type, provider, "providerAccountId") values (?, ?, ?, ?)',
      ['clx0bo00000002', 'oidc', 'github', '1002'],
    ],
    [
      'insert into "Account" ("userId", type, provider, "providerAccountId") values (?, ?, ?, ?)',
      ['clx0ada0000001', 'webauthn', 'passkey', passkey.id],
    ],
    [
      'insert into "Authenticator" ("credentialID", "userId", "providerAccountId", "credentialPublicKey", counter, "credentialDeviceType", "credentialBackedUp", transports) values (?, ?, ?, ?, ?, ?, ?, ?)',
      // Auth.js keeps the key in base64 here: the import takes either alphabet.
      [
        '' + passkey.id,
        'clx0ada0000001',
        passkey.id,
        Buffer.from(passkey.publicKey, 'base64url').toString('base64'),
        3,
        'multiDevice',
        yes,
        'internal,hybrid',
      ],
    ],
  ] as const;

function prismaSqlite(file: string): string {
  const db = new DatabaseSync(file);
  for (const statement of prismaTables('integer', 'integer')) db.exec(statement);
  for (const [sql, params] of rows((iso) => Date.parse(iso), 1))
    db.prepare(sql).run(...(params as unknown as Array<string | number>));
  db.close();
  return `file:${file}`;
}

async function prismaPostgres(database: TestDatabase): Promise<string> {
  await withPgClient(database.url, async (client) => {
    for (const statement of prismaTables('timestamp(3)', 'boolean')) await client.query(statement);
    for (const [sql, params] of rows((iso) => new Date(iso), true)) {
      let n = 0;
      await client.query(
        sql.replace(/\?/g, () => `$${(n += 1)}`),
        [...params],
      );
    }
  });
  return database.url;
}

function drizzleSqlite(file: string): string {
  const db = new DatabaseSync(file);
  for (const statement of drizzleTables) db.exec(statement);
  db.prepare('insert into "user" (id, name, email, "emailVerified") values (?, ?, ?, ?)').run(
    'd-1',
    'Cy',
    'cy@example.com',
    Date.parse('2024-05-05T00:00:00.000Z'),
  );
  db.prepare('insert into "credentials" ("userId", hash) values (?, ?)').run('d-1', hash);
  db.prepare(
    'insert into "account" ("userId", type, provider, "providerAccountId") values (?, ?, ?, ?)',
  ).run('d-1', 'oauth', 'github', '2001');
  db.close();
  return `file:${file}`;
}

const github = { AUTH_GITHUB_ID: 'gh-client', AUTH_GITHUB_SECRET: 'gh-secret' };

for (const source of ['Prisma on SQLite', 'Prisma on PostgreSQL', 'Drizzle on SQLite'] as const) {
  describe.skipIf(source.includes('PostgreSQL') && !hasPostgres)(
    `gatehouse import authjs: ${source}`,
    () => {
      let dir: string;
      let service: AccountService;
      let old: string;
      const disposals: Array<() => Promise<void>> = [];

      beforeAll(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-import-authjs-'));
        if (source === 'Prisma on SQLite') old = prismaSqlite(path.join(dir, 'dev.db'));
        else if (source === 'Drizzle on SQLite') old = drizzleSqlite(path.join(dir, 'drizzle.db'));
        else {
          const database = await createTestDatabase();
          disposals.push(() => database.drop());
          old = await prismaPostgres(database);
        }
        const database = await serviceDatabase('sqlite');
        disposals.push(database.dispose);
        service = await startAccountService({ ...database.env, ...github });
      });
      afterAll(async () => {
        await service.stop();
        for (const dispose of disposals) await dispose();
        fs.rmSync(dir, { recursive: true, force: true });
      });

      const passwordColumn = source.startsWith('Drizzle') ? 'credentials.hash' : 'User.password';
      const listed = async () =>
        (
          JSON.parse((await service.cli(['users', 'list', '--json'])).stdout) as Array<{
            id: string;
            email: string;
            emailVerified: boolean;
          }>
        )
          .map((user) => [user.id, user.email, user.emailVerified])
          .sort();

      it('--check reports, then the import keeps ids, addresses, identities, passkeys and hashes; a second run changes nothing', async () => {
        const args = ['import', 'authjs', '--database', old, '--password-column', passwordColumn];
        const checked = await service.cli([...args, '--check']);
        expect(checked.code, checked.stderr).toBe(0);
        expect(await listed()).toEqual([]);
        const imported = await service.cli(args);
        expect(imported.code, imported.stderr).toBe(0);
        expect(imported.stdout).toContain('(password hashes: 1 bcrypt');
        const again = await service.cli(args);
        expect(again.stdout).toContain('0 users added');
        if (source.startsWith('Drizzle')) {
          expect(await listed()).toEqual([['d-1', 'cy@example.com', true]]);
          return;
        }
        expect(await listed()).toEqual([
          ['clx0ada0000001', 'ada@example.com', true],
          ['clx0bo00000002', 'bo@example.com', false],
        ]);
        const identities = await service.cli([
          'users',
          'identities',
          '--email',
          'bo@example.com',
          '--json',
        ]);
        expect(JSON.parse(identities.stdout)).toMatchObject([{ provider: 'github' }]);
      });

      it('the old password signs in; the old passkey too', async () => {
        const email = source.startsWith('Drizzle') ? 'cy@example.com' : 'ada@example.com';
        const client = new Client(service.url);
        expect((await client.signIn(email, password)).status).toBe(200);
        expect(((await client.session()) as { user: { email: string } }).user.email).toBe(email);
        if (source.startsWith('Drizzle')) return;
        const browser = new Client(service.url);
        const answer = await signInWithSoftPasskey(browser, passkey, 4);
        expect(answer.status).toBe(200);
        expect(((await browser.session()) as { user: { id: string } }).user.id).toBe(
          'clx0ada0000001',
        );
      });
    },
  );
}

describe('gatehouse import authjs refuses what it cannot read', () => {
  it('a database with no adapter tables, a missing file, a bad --password-column: exit 2, saying why', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-import-authjs-bad-'));
    const database = await serviceDatabase('sqlite');
    const service = await startAccountService(database.env);
    try {
      const other = new DatabaseSync(path.join(dir, 'other.db'));
      other.exec('create table things (id text)');
      other.close();
      const none = await service.cli([
        'import',
        'authjs',
        '--database',
        `file:${path.join(dir, 'other.db')}`,
      ]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('no Auth.js adapter tables in');
      const missing = await service.cli([
        'import',
        'authjs',
        '--database',
        `file:${path.join(dir, 'nope.db')}`,
      ]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('no SQLite file at');
      expect(fs.existsSync(path.join(dir, 'nope.db'))).toBe(false);
      const prisma = prismaSqlite(path.join(dir, 'dev.db'));
      const column = await service.cli([
        'import',
        'authjs',
        '--database',
        prisma,
        '--password-column',
        'User.hash',
      ]);
      expect(column.code).toBe(2);
      expect(column.stderr).toContain('the password column\'s table "User" has no column "hash"');
      // Without the GitHub provider configured, the identities are named, and nothing written.
      const unconfigured = await service.cli(['import', 'authjs', '--database', prisma]);
      expect(unconfigured.code).toBe(1);
      expect(unconfigured.stdout).toContain('names github, which is not configured here');
    } finally {
      await service.stop();
      await database.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
