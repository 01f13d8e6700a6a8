import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { runNode } from '../helpers/spawn.js';

describe('gatehouse users CLI on a real database', () => {
  let dir: string;
  let env: Record<string, string>;
  const users = (args: string[], stdin?: string) =>
    runNode('gatehouse-cli.cjs', ['users', ...args], env, stdin);

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-'));
    env = { DATABASE_URL: `file:${path.join(dir, 'cli.db')}` };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('adds a user from --password-stdin with a normalised email and an argon2id hash', async () => {
    const result = await users(
      ['add', '--email', ' Grace@Example.COM ', '--name', 'Grace Hopper', '--password-stdin'],
      'a long and fine password\n',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^added grace@example.com \(id [0-9a-f-]{36}\)/);
    const { db } = openDatabase(env.DATABASE_URL as string);
    const row = await db.selectFrom('users').selectAll().executeTakeFirstOrThrow();
    await db.destroy();
    expect(row.email).toBe('grace@example.com');
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row.password_hash).not.toContain('a long and fine password');
  });

  it('lists users under a header row, also as JSON', async () => {
    const text = await users(['list']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^EMAIL\tNAME\tSTATE\tID\tADDRESS\tFACTORS\tLOCK\ngrace@example.com\tGrace Hopper\tenabled\t[0-9a-f-]{36}\tunverified\tnone\n$/,
    );
    const json = await users(['list', '--json']);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        email: 'grace@example.com',
        name: 'Grace Hopper',
        disabled: false,
      }),
    ]);
  });

  it('shows each user’s second factors, so an operator sees who enrolled (SECOND_FACTOR=required)', async () => {
    const { db } = openDatabase(env.DATABASE_URL as string);
    const { id } = await db.selectFrom('users').select('id').executeTakeFirstOrThrow();
    // An authenticator app turned on, as its confirmation leaves the row.
    await db
      .insertInto('user_totp')
      .values({ user_id: id, secret: 'sealed', pending_secret: null, enabled_at: 1, updated_at: 1 })
      .execute();
    await db.destroy();
    const text = await users(['list']);
    expect(text.stdout.split('\n')[1]).toMatch(/\tunverified\ttotp$/);
    const json = JSON.parse((await users(['list', '--json'])).stdout) as {
      secondFactors: string[];
    }[];
    expect(json[0]?.secondFactors).toEqual(['totp']);
    const { db: again } = openDatabase(env.DATABASE_URL as string);
    await again.deleteFrom('user_totp').execute();
    await again.destroy();
  });

  it.each([
    [
      ['add', '--email', 'grace@example.com', '--password-stdin'],
      'another fine password',
      1,
      'already exists',
    ],
    [
      ['add', '--email', 'new@example.com', '--password-stdin'],
      'short',
      1,
      'at least 12 characters',
    ],
    [
      ['add', '--email', 'new@example.com', '--password-stdin'],
      'password1234567',
      1,
      'commonly used',
    ],
    [
      ['add', '--email', 'not-an-email', '--password-stdin'],
      'a long and fine password',
      2,
      'not an email address',
    ],
    [['add', '--password-stdin'], 'a long and fine password', 2, '--email is required'],
    [
      ['add', '--email', 'x@example.com', '--password', 'secret123456'],
      '',
      2,
      'never taken from arguments',
    ],
    [
      ['set-password', '--email', 'nobody@example.com', '--password-stdin'],
      'a long and fine password',
      1,
      'no user with email nobody@example.com',
    ],
    [['disable', '--email', 'nobody@example.com'], '', 1, 'no user with email'],
    [['frobnicate'], '', 2, 'unknown command (an argument not shown'],
    [['add', '--email', 'new@example.com'], '', 2, 'use --password-stdin'],
  ])('users %j fails clearly', async (args, stdin, code, message) => {
    const result = await users(args, stdin);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
  });

  it.each([
    [['add', '--email', 'x@example.com', 'Tr0ub4dor and 3 horses']],
    [['add', '--email', 'Tr0ub4dor and 3 horses', '--password-stdin']],
    [['add', '--email', 'x@example.com', '--password=Tr0ub4dor and 3 horses']],
    [['add', '--Tr0ub4dor and 3 horses']],
    [['Tr0ub4dor and 3 horses']],
    [['users-typo', 'Tr0ub4dor and 3 horses']],
  ])('users %j never prints the stray argument (it might be a password)', async (args) => {
    const result = await runNode('gatehouse-cli.cjs', ['users', ...args], env, '');
    expect(result.code).toBe(2);
    expect(result.stderr).not.toBe('');
    expect(`${result.stdout}${result.stderr}`).not.toContain('Tr0ub4dor');
  });

  it('a new data folder is made 0700 and the database files 0600', async () => {
    const dataDir = path.join(dir, 'fresh', 'data');
    const result = await runNode(
      'gatehouse-cli.cjs',
      ['users', 'add', '--email', 'mode@example.com', '--password-stdin'],
      { DATA_DIR: dataDir },
      'a long and fine password',
    );
    expect(result.code).toBe(0);
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(dataDir).filter((name) => name.startsWith('gatehouse.db'));
    expect(files).toContain('gatehouse.db');
    for (const name of files) {
      expect([name, fs.statSync(path.join(dataDir, name)).mode & 0o777]).toEqual([name, 0o600]);
    }
  });

  it.each(['add', 'list', 'set-password', 'disable', 'enable', 'remove', 'revoke-sessions'])(
    'users %s --help explains the command',
    async (command) => {
      const result = await users([command, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: gatehouse users ${command}`);
    },
  );

  it('disable, enable, set-password, revoke-sessions and remove change the real rows', async () => {
    expect((await users(['disable', '--email', 'grace@example.com'])).stdout).toContain(
      'disabled grace@example.com',
    );
    expect((await users(['list'])).stdout).toContain('\tdisabled\t');
    expect((await users(['enable', '--email', 'grace@example.com'])).code).toBe(0);
    expect((await users(['list'])).stdout).toContain('\tenabled\t');
    const set = await users(
      ['set-password', '--email', 'grace@example.com', '--password-stdin'],
      'a brand new passphrase',
    );
    expect(set.code).toBe(0);
    const revoke = await users(['revoke-sessions', '--email', 'grace@example.com']);
    expect(revoke.stdout).toMatch(/ended 0 sessions of grace@example.com/);
    expect((await users(['remove', '--email', 'grace@example.com'])).code).toBe(0);
    expect((await users(['list'])).stdout).toContain('no users yet');
  });
});

describe('gatehouse users list with hostile names', () => {
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-names-'));
    env = { DATABASE_URL: `file:${path.join(dir, 'names.db')}` };
    // Straight into the store: a row written by an older version, a restore or another tool.
    const { db } = openDatabase(env.DATABASE_URL as string);
    await migrateToLatest(db);
    await db
      .insertInto('users')
      .values({
        id: '00000000-0000-4000-8000-000000000001',
        email: 'eve\u001b[2J@example.com',
        name: 'Eve\u001b]0;pwned\u0007\u009b31m\r\nroot\tadmin\u202eevil\u2028\\u0041 👩‍👩‍👧',
        password_hash: 'x',
        created_at: 0,
        updated_at: 0,
      })
      .execute();
    await db.destroy();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('escapes control, separator and bidi characters in the table, and keeps emoji joiners', async () => {
    const text = await runNode('gatehouse-cli.cjs', ['users', 'list'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(
      'EMAIL\tNAME\tSTATE\tID\tADDRESS\tFACTORS\tLOCK\n' +
        'eve\\u001b[2J@example.com\t' +
        'Eve\\u001b]0;pwned\\u0007\\u009b31m\\u000d\\u000aroot\\u0009admin\\u202eevil\\u2028\\\\u0041 👩‍👩‍👧' +
        '\tenabled\t00000000-0000-4000-8000-000000000001\tunverified\tnone\n',
    );
    // Only the table's own tabs and line end are left as controls.
    expect(text.stdout.replace(/[\t\n]/g, '')).not.toMatch(/[\p{Cc}\u202e\u2028]/u);
  });

  it('leaves the JSON output exact: JSON itself escapes the C0 controls', async () => {
    const json = await runNode('gatehouse-cli.cjs', ['users', 'list', '--json'], env);
    expect(json.stdout).toContain('"email": "eve\\u001b[2J@example.com"');
    expect(JSON.parse(json.stdout)[0].name).toBe(
      'Eve\u001b]0;pwned\u0007\u009b31m\r\nroot\tadmin\u202eevil\u2028\\u0041 👩‍👩‍👧',
    );
  });
});
