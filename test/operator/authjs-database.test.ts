import { afterEach, describe, expect, it } from 'vitest';
import {
  readAuthjsDatabase,
  type AuthjsLayout,
  type AuthjsSourceOptions,
} from '../../src/operator/import/authjs-database.js';
import type { ImportRecord } from '../../src/operator/import/import-record.js';
import { isSourceProblem, type SourceProblem } from '../../src/operator/import/source-problem.js';
import {
  authjsFixture,
  authjsSchema,
  authjsSchemas,
  createFixtureDb,
  engineAvailable,
  type AuthjsFixture,
  type AuthjsSchema,
  type FixtureDb,
} from '../helpers/authjs-schemas.js';
import { withPgClient } from '../helpers/postgres.js';

/*
 * `gatehouse import authjs` reads an Auth.js app's database (adoption spec §3): each adapter's
 * default tables, as its own migrations make them, on SQLite and on PostgreSQL.
 */

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const verifiedAt = new Date('2024-01-02T03:04:05.678Z');
const createdAt = new Date('2023-06-07T08:09:10.111Z');

// A credential id with `+` and `/` and padding, as Auth.js's toBase64 writes it, and the same
// bytes as base64url without padding, as a passkey keeps it.
const credentialBytes = Buffer.from([0xfb, 0xff, 0xbf, 0x01, 0x02, 0x03, 0x04]);
const publicKeyBytes = Buffer.from('a5010203262001215820', 'hex');

/** Everything a read yields, records and problems apart, and the layout it reported. */
async function readAll(options: AuthjsSourceOptions) {
  const records: ImportRecord[] = [];
  const problems: SourceProblem[] = [];
  let layout: AuthjsLayout | undefined;
  for await (const item of readAuthjsDatabase({
    ...options,
    onLayout: (found) => (layout = found),
  })) {
    if (isSourceProblem(item)) problems.push(item);
    else records.push(item);
  }
  return { records, problems, layout };
}

/** The message a read fails with before it yields anything. */
async function failureOf(options: AuthjsSourceOptions): Promise<string> {
  try {
    await readAll(options);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the read did not fail');
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});

async function fixture(schema: AuthjsSchema, foreignKeys = true): Promise<AuthjsFixture> {
  const made = await authjsFixture(schema, { foreignKeys });
  open.push(made.db);
  return made;
}

async function emptyDb(engine: AuthjsSchema['engine']): Promise<FixtureDb> {
  const db = await createFixtureDb(engine);
  open.push(db);
  return db;
}

/** Four users: one with identities and a passkey, one bare, one without an address, one with a broken key. */
async function fillApp(app: AuthjsFixture) {
  const hasPasskeys = app.schema.authenticators !== null;
  await app.addUser({
    id: id(1),
    email: '  Ada@Example.COM',
    name: 'Ada',
    emailVerified: verifiedAt,
    createdAt,
  });
  await app.addAccount({
    userId: id(1),
    type: 'oauth',
    provider: 'github',
    providerAccountId: '1001',
  });
  await app.addAccount({
    userId: id(1),
    type: 'oidc',
    provider: 'google',
    providerAccountId: 'g-sub-1',
  });
  await app.addAccount({
    userId: id(1),
    type: 'email',
    provider: 'resend',
    providerAccountId: 'ada@example.com',
  });
  await app.addUser({
    id: id(2),
    email: 'grace@example.com',
    name: null,
    emailVerified: null,
    createdAt,
  });
  await app.addUser({ id: id(3), email: 'not-an-address', name: 'Nobody', createdAt });
  await app.addUser({ id: id(4), email: 'broken@example.com', name: 'Broken', createdAt });
  if (!hasPasskeys) return;
  const credentialID = credentialBytes.toString('base64');
  await app.addAccount({
    userId: id(1),
    type: 'webauthn',
    provider: 'passkey',
    providerAccountId: credentialID,
  });
  await app.addAuthenticator({
    userId: id(1),
    credentialID,
    credentialPublicKey: publicKeyBytes.toString('base64'),
    counter: 7,
    credentialBackedUp: true,
    transports: 'internal,hybrid',
  });
  await app.addAuthenticator({
    userId: id(2),
    credentialID: 'AQIDBA',
    credentialPublicKey: publicKeyBytes.toString('base64url'),
    counter: 0,
    credentialBackedUp: false,
    transports: null,
  });
  await app.addAuthenticator({
    userId: id(4),
    credentialID: 'BQYHCA==',
    credentialPublicKey: 'not base64!',
    counter: 1,
    credentialBackedUp: false,
    transports: 'usb',
  });
}

const adapterReported = { prisma: 'prisma', drizzle: 'drizzle', kysely: 'kysely' } as const;

describe.each(authjsSchemas)('$name', (schema) => {
  const withPasskeys = schema.authenticators !== null;

  it.skipIf(!engineAvailable(schema.engine))(
    'users come over with their ids, normalised addresses, identities and passkeys; bad rows are problems',
    async () => {
      const app = await fixture(schema);
      await fillApp(app);
      const { records, problems, layout } = await readAll({ databaseUrl: app.db.url });

      expect(layout).toMatchObject({
        adapter: adapterReported[schema.adapter],
        users: schema.users,
        accounts: schema.accounts,
        authenticators: schema.authenticators,
        password: null,
      });
      const created = schema.datedRows ? createdAt.getTime() : null;
      const expected: ImportRecord[] = [
        {
          id: id(1),
          email: 'ada@example.com',
          name: 'Ada',
          emailVerifiedAt: verifiedAt.getTime(),
          passwordHash: null,
          createdAt: created,
          identities: [
            { provider: 'github', subject: '1001' },
            { provider: 'google', subject: 'g-sub-1' },
          ],
          passkeys: withPasskeys
            ? [
                {
                  credentialId: credentialBytes.toString('base64url'),
                  publicKey: publicKeyBytes.toString('base64url'),
                  counter: 7,
                  transports: ['internal', 'hybrid'],
                  backedUp: true,
                },
              ]
            : [],
        },
        {
          id: id(2),
          email: 'grace@example.com',
          name: '',
          emailVerifiedAt: null,
          passwordHash: null,
          createdAt: created,
          identities: [],
          passkeys: withPasskeys
            ? [
                {
                  credentialId: 'AQIDBA',
                  publicKey: publicKeyBytes.toString('base64url'),
                  counter: 0,
                  transports: [],
                  backedUp: false,
                },
              ]
            : [],
        },
      ];
      if (!withPasskeys)
        expected.push({
          id: id(4),
          email: 'broken@example.com',
          name: 'Broken',
          emailVerifiedAt: null,
          passwordHash: null,
          createdAt: created,
          identities: [],
          passkeys: [],
        });
      expect(records).toEqual(expected);

      const emailProblem: SourceProblem = {
        kind: 'problem',
        table: schema.users,
        rowId: id(3),
        field: 'email',
        reason: '"not-an-address" is not one mailbox address',
        userId: id(3),
      };
      const keyProblem: SourceProblem = {
        kind: 'problem',
        table: schema.authenticators ?? '',
        rowId: 'BQYHCA==',
        field: 'credentialPublicKey',
        reason: 'is not base64 or base64url',
        userId: id(4),
      };
      expect(problems).toEqual(withPasskeys ? [emailProblem, keyProblem] : [emailProblem]);
    },
  );
});

describe.each(['sqlite', 'postgres'] as const)('on %s', (engine) => {
  const skip = !engineAvailable(engine);

  it.skipIf(skip)('users are read in pages by id, each with its own rows', async () => {
    const app = await fixture(authjsSchema('prisma', engine));
    // Inserted out of order: the pages follow the ids, not the insertion.
    for (const n of [5, 3, 7, 1, 6, 2, 4]) {
      await app.addUser({ id: id(n), email: `user${n}@example.com`, name: `User ${n}` });
      await app.addAccount({
        userId: id(n),
        type: 'oauth',
        provider: 'github',
        providerAccountId: `gh-${n}`,
      });
    }
    for (const pageSize of [1, 2, 3, 7, 8]) {
      const { records, problems } = await readAll({ databaseUrl: app.db.url, pageSize });
      expect(problems).toEqual([]);
      expect(records.map((record) => [record.id, record.identities[0]?.subject])).toEqual(
        [1, 2, 3, 4, 5, 6, 7].map((n) => [id(n), `gh-${n}`]),
      );
    }
  });

  it.skipIf(skip)('a password column of the users table is read with the user', async () => {
    const app = await fixture(authjsSchema('drizzle', engine));
    await app.db.run('alter table "user" add column "passwordHash" text');
    await app.addUser({ id: id(1), email: 'ada@example.com' });
    await app.addUser({ id: id(2), email: 'grace@example.com' });
    await app.db.run(`update "user" set "passwordHash" = ${engine === 'sqlite' ? '?' : '$1'}`, [
      '$2b$10$abcdefghijklmnopqrstuu',
    ]);
    await app.db.run(`update "user" set "passwordHash" = null where "id" = '${id(2)}'`);
    const { records, problems, layout } = await readAll({
      databaseUrl: app.db.url,
      passwordColumn: 'user.passwordHash',
    });
    expect(problems).toEqual([]);
    expect(layout?.password).toEqual({ table: 'user', column: 'passwordHash', userIdColumn: null });
    expect(records.map((record) => record.passwordHash)).toEqual([
      '$2b$10$abcdefghijklmnopqrstuu',
      null,
    ]);
  });

  it.skipIf(skip)(
    'a password column of another table is read by its user id; two rows for one user are a problem',
    async () => {
      const app = await fixture(authjsSchema('prisma', engine));
      await app.db.run('create table "password" ("user_id" text not null, "hash" text)');
      for (const n of [1, 2, 3]) await app.addUser({ id: id(n), email: `user${n}@example.com` });
      await app.db.insert('password', {
        user_id: id(1),
        hash: '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA',
      });
      await app.db.insert('password', { user_id: id(3), hash: 'one' });
      await app.db.insert('password', { user_id: id(3), hash: 'two' });
      const { records, problems } = await readAll({
        databaseUrl: app.db.url,
        passwordColumn: 'password.hash',
        pageSize: 2,
      });
      expect(records.map((record) => [record.id, record.passwordHash])).toEqual([
        [id(1), '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA'],
        [id(2), null],
      ]);
      expect(problems).toEqual([
        {
          kind: 'problem',
          table: 'password',
          rowId: id(3),
          field: 'hash',
          reason: 'has 2 rows for the user: which is the password is unclear',
          userId: id(3),
        },
      ]);
    },
  );

  it.skipIf(skip)(
    'a password column that is not there is refused before anything is read',
    async () => {
      const app = await fixture(authjsSchema('drizzle', engine));
      await app.db.run('create table "secret" ("owner" text, "hash" text)');
      const databaseUrl = app.db.url;
      const cases: Array<[string, string]> = [
        ['passwordHash', 'the password column "passwordHash" is not TABLE.COLUMN'],
        ['users.password', `the password column's table "users" is not in ${whereOf(app.db)}`],
        ['user.password', 'the password column\'s table "user" has no column "password"'],
        [
          'secret.hash',
          'the password column\'s table "secret" has neither a "userId" nor a "user_id" column naming the user',
        ],
      ];
      for (const [passwordColumn, message] of cases)
        expect(await failureOf({ databaseUrl, passwordColumn })).toBe(message);
    },
  );

  it.skipIf(skip)(
    'a database without an Auth.js layout is refused, naming the layouts looked for',
    async () => {
      const db = await emptyDb(engine);
      await db.run('create table "things" ("id" text)');
      expect(await failureOf({ databaseUrl: db.url })).toBe(
        `no Auth.js adapter tables in ${whereOf(db)} (looked for the Prisma and Kysely adapters' tables ` +
          '"User", "Account" and "Authenticator", and the Drizzle adapter\'s "user", "account" and "authenticator")',
      );
    },
  );

  it.skipIf(skip)('missing columns are named all at once', async () => {
    const db = await emptyDb(engine);
    await db.run(
      'create table "user" ("id" text, "email" text); create table "account" ("userId" text, "type" text)',
    );
    expect(await failureOf({ databaseUrl: db.url })).toBe(
      `${whereOf(db)} lacks the columns "user"."name", "user"."emailVerified", "account"."provider", ` +
        `"account"."providerAccountId" (looked for the Prisma and Kysely adapters' tables "User", "Account" ` +
        'and "Authenticator", and the Drizzle adapter\'s "user", "account" and "authenticator")',
    );
  });
});

/** How the source names the database in its messages. */
function whereOf(db: FixtureDb): string {
  if (db.engine === 'sqlite') return `sqlite ${db.url.slice('file:'.length)}`;
  const url = new URL(db.url);
  return `postgresql ${url.hostname}:${url.port}/${url.pathname.slice(1)} (schema "public")`;
}

describe('on sqlite', () => {
  it('dates kept as ISO text (Prisma through a driver adapter) read as those kept as numbers', async () => {
    const app = await fixture(authjsSchema('prisma', 'sqlite'));
    await app.addUser({ id: id(1), email: 'a@example.com' });
    await app.addUser({ id: id(2), email: 'b@example.com' });
    await app.addUser({ id: id(3), email: 'c@example.com' });
    await app.db.run(`update "User" set "emailVerified" = ? where "id" = '${id(1)}'`, [
      '2024-01-02T03:04:05.678+00:00',
    ]);
    await app.db.run(`update "User" set "emailVerified" = ? where "id" = '${id(2)}'`, [
      '2024-01-02 03:04:05.678',
    ]);
    await app.db.run(`update "User" set "emailVerified" = ? where "id" = '${id(3)}'`, [1704164645]);
    const { records, problems } = await readAll({ databaseUrl: app.db.url });
    expect(records.map((record) => record.emailVerifiedAt)).toEqual([
      verifiedAt.getTime(),
      verifiedAt.getTime(),
    ]);
    expect(problems).toEqual([
      {
        kind: 'problem',
        table: 'User',
        rowId: id(3),
        field: 'emailVerified',
        reason: '1704164645 is before 1973 as epoch milliseconds (stored in seconds?)',
        userId: id(3),
      },
    ]);
  });

  it('accounts and authenticators whose user is gone are problems, not lost', async () => {
    const app = await fixture(authjsSchema('drizzle', 'sqlite'), false);
    await app.addUser({ id: id(1), email: 'a@example.com' });
    await app.addAccount({
      userId: 'ghost',
      type: 'oauth',
      provider: 'github',
      providerAccountId: '9',
    });
    await app.addAccount({
      userId: 'ghost',
      type: 'webauthn',
      provider: 'passkey',
      providerAccountId: 'AQID',
    });
    await app.addAuthenticator({
      userId: 'ghost',
      credentialID: 'AQID',
      credentialPublicKey: 'AQID',
      counter: 0,
      credentialBackedUp: false,
      transports: null,
    });
    const { records, problems } = await readAll({ databaseUrl: app.db.url });
    expect(records.map((record) => record.id)).toEqual([id(1)]);
    expect(problems).toEqual([
      {
        kind: 'problem',
        table: 'account',
        rowId: 'provider=github, providerAccountId=9',
        field: 'userId',
        reason: '"ghost" names no row of "user"',
        userId: 'ghost',
      },
      {
        kind: 'problem',
        table: 'authenticator',
        rowId: 'AQID',
        field: 'userId',
        reason: '"ghost" names no row of "user"',
        userId: 'ghost',
      },
    ]);
  });

  it('a user without an address (Drizzle allows it) is a problem', async () => {
    const app = await fixture(authjsSchema('drizzle', 'sqlite'));
    await app.addUser({ id: id(1), email: null });
    const { records, problems } = await readAll({ databaseUrl: app.db.url });
    expect(records).toEqual([]);
    expect(problems).toEqual([
      {
        kind: 'problem',
        table: 'user',
        rowId: id(1),
        field: 'email',
        reason: 'is empty: every Gatehouse account has an address',
        userId: id(1),
      },
    ]);
  });

  it("Prisma's names without a migrations or authenticator table could be either adapter's", async () => {
    const app = await fixture(authjsSchema('kysely', 'sqlite'));
    await app.db.run('drop table "kysely_migration"');
    const { layout } = await readAll({ databaseUrl: app.db.url });
    expect(layout?.adapter).toBe('prisma-or-kysely');
  });

  it('a missing file is named, never created', async () => {
    const db = await emptyDb('sqlite');
    const missing = `${db.url.slice('file:'.length)}.missing`;
    expect(await failureOf({ databaseUrl: `file:${missing}` })).toBe(
      `no SQLite file at ${missing}`,
    );
  });
});

describe.skipIf(!engineAvailable('postgres'))('on postgres', () => {
  it('a Prisma-style ?schema= names the schema read', async () => {
    const db = await emptyDb('postgres');
    const drizzle = authjsSchema('drizzle', 'postgres');
    await db.run(
      `create schema app; set search_path = app; ${drizzle.ddl.replaceAll('"public".', '"app".')}`,
    );
    await db.run(`insert into app."user" ("id", "email") values ('${id(1)}', 'a@example.com')`);
    const url = new URL(db.url);
    url.searchParams.set('schema', 'app');
    const { records, layout } = await readAll({ databaseUrl: url.toString() });
    expect(layout?.where).toBe(`${whereOf(db).replace('"public"', '"app"')}`);
    expect(records.map((record) => record.email)).toEqual(['a@example.com']);
  });

  it('a read left early closes its connection', async () => {
    const app = await fixture(authjsSchema('kysely', 'postgres'));
    for (const n of [1, 2, 3]) await app.addUser({ id: id(n), email: `user${n}@example.com` });
    for await (const item of readAuthjsDatabase({ databaseUrl: app.db.url, pageSize: 1 })) {
      expect(isSourceProblem(item)).toBe(false);
      break;
    }
    // The fixture's own connection is the only one left.
    const others = await withPgClient(app.db.url, async (client) => {
      const result = await client.query(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
      return (result.rows[0] as { n: number }).n;
    });
    expect(others).toBe(1);
  });
});
