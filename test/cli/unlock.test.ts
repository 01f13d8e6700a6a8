import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { runNode } from '../helpers/spawn.js';

const password = 'correct horse battery staple';

/** The real CLI on the server's own database file. */
function users(server: TestServer, args: string[], stdin?: string) {
  return runNode(
    'gatehouse-cli.cjs',
    ['users', ...args],
    { DATABASE_URL: `file:${server.dir}/test.db` },
    stdin,
  );
}

async function signInCode(server: TestServer, email: string, attempt: string): Promise<string> {
  const client = new Client(server.url);
  const response = await client.signIn(email, attempt);
  const { url } = (await response.json()) as { url: string };
  return new URL(url).searchParams.get('code') ?? 'ok';
}

async function lock(server: TestServer, email: string): Promise<void> {
  for (let i = 0; i < 3; i += 1) await signInCode(server, email, 'not the password at all');
  expect(await signInCode(server, email, password)).toBe('rate_limited');
}

describe('an admin lifts a sign-in lock', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      config: {},
      throttle: { emailMaxFailures: 3, ipMaxFailures: 1000, windowSeconds: 900, lockSeconds: 900 },
    });
    await addUser(server, 'ada@example.com', password);
    await addUser(server, 'bob@example.com', password);
  });
  afterAll(() => server.close());

  it('users unlock --email lets the right password in at once', async () => {
    await lock(server, 'ada@example.com');
    const unlocked = await users(server, ['unlock', '--email', 'Ada@Example.com']);
    expect(unlocked.code).toBe(0);
    expect(unlocked.stdout).toContain('unlocked ada@example.com');
    expect(await signInCode(server, 'ada@example.com', password)).toBe('ok');
  });

  it('users list shows the lock and when it ends, as text and as JSON', async () => {
    await lock(server, 'ada@example.com');
    const text = await users(server, ['list']);
    expect(text.stdout).toMatch(/^ada@example\.com\t.*\tlocked until \d{4}-\d\d-\d\dT[\d:.]+Z$/m);
    expect(text.stdout).toMatch(/^bob@example\.com\t[^\n]*[0-9a-f]$/m);
    const json = JSON.parse((await users(server, ['list', '--json'])).stdout) as {
      email: string;
      lockedUntil: string | null;
    }[];
    const ada = json.find((row) => row.email === 'ada@example.com');
    expect(Date.parse(ada?.lockedUntil ?? '')).toBeGreaterThan(Date.now());
    expect(json.find((row) => row.email === 'bob@example.com')?.lockedUntil).toBeNull();
    expect((await users(server, ['unlock', '--email', 'ada@example.com'])).code).toBe(0);
  });

  it('users set-password lifts the lock too', async () => {
    await lock(server, 'bob@example.com');
    const set = await users(
      server,
      ['set-password', '--email', 'bob@example.com', '--password-stdin'],
      'a brand new passphrase',
    );
    expect(set.code).toBe(0);
    expect(await signInCode(server, 'bob@example.com', 'a brand new passphrase')).toBe('ok');
  });

  it('users enable lifts the lock too', async () => {
    await lock(server, 'ada@example.com');
    expect((await users(server, ['disable', '--email', 'ada@example.com'])).code).toBe(0);
    expect((await users(server, ['enable', '--email', 'ada@example.com'])).code).toBe(0);
    expect(await signInCode(server, 'ada@example.com', password)).toBe('ok');
  });

  it('an email with no account can be unlocked (throttling counts it all the same)', async () => {
    const result = await users(server, ['unlock', '--email', 'nobody@example.com']);
    expect(result.code).toBe(0);
  });

  it('says so when there was no lock to lift, and exits 0 all the same', async () => {
    const result = await users(server, ['unlock', '--email', 'Bob@Example.com']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('no lock on bob@example.com');
    expect(result.stdout).not.toContain('unlocked');
  });
});
