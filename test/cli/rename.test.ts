import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode } from '../helpers/spawn.js';

describe('gatehouse users rename and set-email', () => {
  let dir: string;
  let env: Record<string, string>;
  const users = (args: string[], stdin?: string) =>
    runNode('gatehouse-cli.cjs', ['users', ...args], env, stdin);
  const list = async () =>
    JSON.parse((await users(['list', '--json'])).stdout) as {
      email: string;
      name: string;
      emailVerified: boolean;
    }[];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-rename-'));
    env = { DATABASE_URL: `file:${path.join(dir, 'cli.db')}` };
    for (const email of ['ada@example.com', 'bob@example.com']) {
      const added = await users(
        ['add', '--email', email, '--password-stdin'],
        'a long and fine password',
      );
      expect(added.code).toBe(0);
    }
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('rename changes the name', async () => {
    const result = await users(['rename', '--email', 'Ada@Example.com', '--name', 'Ada Lovelace']);
    expect(result.code).toBe(0);
    expect((await list()).find((user) => user.email === 'ada@example.com')?.name).toBe(
      'Ada Lovelace',
    );
  });

  it('set-email normalises the new address and moves the user', async () => {
    const result = await users([
      'set-email',
      '--email',
      'ada@example.com',
      '--new-email',
      '  Ada@New.Example ',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('moved ada@example.com to ada@new.example');
    expect((await list()).map((user) => user.email)).toEqual([
      'ada@new.example',
      'bob@example.com',
    ]);
  });

  it('a new address counts as unverified unless --verified says the operator knows it', async () => {
    expect((await users(['verify-email', '--email', 'bob@example.com'])).code).toBe(0);
    const verifiedOf = async (email: string) =>
      (await list()).find((user) => user.email === email)?.emailVerified;
    expect(await verifiedOf('bob@example.com')).toBe(true);
    const moved = await users([
      'set-email',
      '--email',
      'bob@example.com',
      '--new-email',
      'bob@new.example',
    ]);
    expect(moved.code).toBe(0);
    expect(await verifiedOf('bob@new.example')).toBe(false);
    const vouched = await users([
      'set-email',
      '--email',
      'bob@new.example',
      '--new-email',
      'bob@example.com',
      '--verified',
    ]);
    expect(vouched.stdout).toContain('moved bob@new.example to bob@example.com, address verified');
    expect(await verifiedOf('bob@example.com')).toBe(true);
  });

  it.each([
    [
      ['set-email', '--email', 'ada@new.example', '--new-email', 'bob@example.com'],
      1,
      'already exists',
    ],
    [
      ['set-email', '--email', 'ada@new.example', '--new-email', 'nope'],
      2,
      '--new-email is not an email',
    ],
    [['set-email', '--email', 'ada@new.example'], 2, '--new-email is required'],
    [['rename', '--email', 'ada@new.example'], 2, '--name is required'],
    [['rename', '--email', 'nobody@example.com', '--name', 'X'], 1, 'no user with email'],
  ])('users %j fails clearly', async (args, code, message) => {
    const result = await users(args);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
  });
});
