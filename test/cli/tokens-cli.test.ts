import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode } from '../helpers/spawn.js';
import { testSecret, type TestServer } from '../helpers/server.js';
import { signedIn, startTokenServer, tokenOf } from '../tokens/token-helpers.js';

// `gatehouse tokens keys` and `gatehouse tokens rotate-key`, run as an operator runs them,
// against a running service's SQLite file: the service signs with the new key 6 minutes later
// (test/tokens/signing-keys.test.ts follows that on a moving clock).

describe('gatehouse tokens', () => {
  let server: TestServer;
  let env: Record<string, string>;
  const cli = (...args: string[]) => runNode('gatehouse-cli.cjs', ['tokens', ...args], env);

  beforeAll(async () => {
    server = await startTokenServer(undefined);
    env = { DATABASE_URL: `file:${server.dir}/test.db`, AUTH_SECRET: testSecret };
  });
  afterAll(() => server.close());

  it('lists the service’s key, rotates, and lists both', async () => {
    const { client } = await signedIn(server, 'ops@example.com');
    await tokenOf(client);
    const before = JSON.parse((await cli('keys', '--json')).stdout) as { kid: string }[];
    expect(before).toHaveLength(1);
    const rotated = await cli('rotate-key');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/^new signing key \S+: published now, signs from /);
    const after = JSON.parse((await cli('keys', '--json')).stdout) as {
      kid: string;
      publishedUntil: string | null;
      opens: boolean;
    }[];
    expect(after.map((key) => key.kid)[0]).toBe(before[0]?.kid);
    expect(after).toHaveLength(2);
    expect(after[0]?.publishedUntil).not.toBeNull();
    expect(after[1]?.publishedUntil).toBeNull();
    expect(after.every((key) => key.opens)).toBe(true);
  });

  it('says why it cannot work without the service’s AUTH_SECRET, or with a key file', async () => {
    const noSecret = await runNode('gatehouse-cli.cjs', ['tokens', 'rotate-key'], {
      DATABASE_URL: env.DATABASE_URL as string,
    });
    expect(noSecret.code).not.toBe(0);
    expect(noSecret.stderr).toContain('AUTH_SECRET is not set here');
    const withFile = await runNode('gatehouse-cli.cjs', ['tokens', 'rotate-key'], {
      ...env,
      TOKEN_SIGNING_KEY:
        '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIB7ZiAbtD/3WRlDKJC8DfQcTeUG4Z1BKDJFx0UYtZb0R\n-----END PRIVATE KEY-----',
    });
    expect(withFile.code).not.toBe(0);
    expect(withFile.stderr).toContain('TOKEN_SIGNING_KEY is set');
  });
});
