import { generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { publishLeadMs, rotateKey } from '../../src/tokens/key-store.js';
import { databaseBackends } from '../helpers/backends.js';
import { Client } from '../helpers/client.js';
import { testSecret, type TestServer } from '../helpers/server.js';
import { activeOf, password, signedIn, startTokenServer, tokenOf } from './token-helpers.js';

// The keys session tokens are signed with: kept in the database and shared by every instance
// on it, rotated without a token failing before it expires, or given as TOKEN_SIGNING_KEY.

const minute = 60_000;

async function keySet(server: TestServer): Promise<JSONWebKeySet> {
  return (await (await fetch(`${server.url}/api/auth/jwks.json`)).json()) as JSONWebKeySet;
}
const kids = async (server: TestServer) => (await keySet(server)).keys.map((key) => key.kid);
const kidOf = (token: string) => decodeProtectedHeader(token).kid;

/** Verifies as a backend would, with the key set fetched now and the service's clock. */
async function verifies(server: TestServer, token: string, at: number): Promise<boolean> {
  try {
    await jwtVerify(token, createLocalJWKSet(await keySet(server)), { currentDate: new Date(at) });
    return true;
  } catch {
    return false;
  }
}

describe.each(databaseBackends('signing-keys'))('signing keys on $name', (backend) => {
  let url: string;
  let dispose: () => Promise<void> = async () => undefined;
  const servers: TestServer[] = [];
  let offset = 0;
  const now = () => Date.now() + offset;
  // One public origin, as behind the fleet's load balancer: one issuer.
  const fleet = { authUrl: 'http://fleet.gatehouse.test' };

  beforeAll(async () => {
    if (backend.skip) return;
    ({ url, dispose } = await backend.create());
    // Two instances on one database (started one after the other: each migrates it); their
    // first tokens, asked for together, agree on one first key.
    for (let n = 0; n < 2; n++)
      servers.push(await startTokenServer(url, { ttlSeconds: 3600 }, { now, config: fleet }));
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await dispose();
  });

  it.skipIf(backend.skip)(
    'a token made on one instance verifies and introspects on the other, one key for both',
    async () => {
      const [a, b] = servers as [TestServer, TestServer];
      const [fromA, fromB] = await Promise.all(
        [a, b].map(async (server, n) => (await signedIn(server, `fleet${n}@example.com`)).client),
      );
      const [tokenA, tokenB] = await Promise.all(
        [fromA, fromB].map(async (client) => (await tokenOf(client as Client)).body.token),
      );
      expect(kidOf(tokenA as string)).toBe(kidOf(tokenB as string));
      expect(await kids(a)).toEqual(await kids(b));
      expect(await verifies(b, tokenA as string, now())).toBe(true);
      expect(await activeOf(b, tokenA as string)).toBe(true);
      await (fromA as Client).signOut();
      expect(await activeOf(b, tokenA as string)).toBe(false);
    },
  );

  it.skipIf(backend.skip)(
    'a rotation publishes the new key before it signs and keeps the old one until its tokens expired',
    async () => {
      const [a, b] = servers as [TestServer, TestServer];
      const { client } = await signedIn(a, 'rotate@example.com');
      const before = (await tokenOf(client)).body.token;
      const oldKid = kidOf(before);
      const rotation = await rotateKey(
        a.db,
        { secrets: [testSecret], ttlSeconds: 3600, immediately: false },
        now(),
      );
      // Within a minute every instance has read the keys again: the new one is published...
      offset += minute + 1000;
      for (const server of [a, b]) expect(await kids(server)).toEqual([oldKid, rotation.kid]);
      // ...but the old one still signs until every cached key set holds the new one.
      expect(kidOf((await tokenOf(client)).body.token)).toBe(oldKid);
      offset += publishLeadMs;
      const after = (await tokenOf(client)).body.token;
      expect(kidOf(after)).toBe(rotation.kid);
      expect(await verifies(b, after, now())).toBe(true);
      // The token signed before the rotation verifies until it expires, on either instance.
      expect(await verifies(b, before, now())).toBe(true);
      expect(await activeOf(b, before)).toBe(true);
      // Once its last token has expired, the old key leaves the set.
      offset += rotation.retiredAt - (Date.now() + offset) + minute + 1000;
      expect(await kids(a)).toEqual([rotation.kid]);
      expect(await activeOf(b, before)).toBe(false);
    },
  );

  it.skipIf(backend.skip)(
    'rotating --now withdraws the old keys at once (a key that leaked)',
    async () => {
      const [a, b] = servers as [TestServer, TestServer];
      const { client } = await signedIn(a, 'leak@example.com');
      const leaked = (await tokenOf(client)).body.token;
      const rotation = await rotateKey(
        a.db,
        { secrets: [testSecret], ttlSeconds: 3600, immediately: true },
        now(),
      );
      offset += minute + 1000;
      expect(await kids(b)).toEqual([rotation.kid]);
      expect(await activeOf(b, leaked)).toBe(false);
      expect(kidOf((await tokenOf(client)).body.token)).toBe(rotation.kid);
    },
  );

  it.skipIf(backend.skip)(
    'the private keys are kept sealed: the database alone signs nothing',
    async () => {
      const [a] = servers as [TestServer];
      const rows = await a.db.selectFrom('token_signing_keys').selectAll().execute();
      for (const row of rows) {
        expect(row.private_sealed).not.toMatch(/PRIVATE KEY|"d"/);
        expect(JSON.parse(row.public_jwk)).not.toHaveProperty('d');
      }
    },
  );
});

describe('TOKEN_SIGNING_KEY', () => {
  const pem = (type: 'ed25519' | 'ec') =>
    (type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('ed25519')
    ).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  let server: TestServer;
  const keys = `${pem('ed25519')}\n${pem('ec')}`;

  beforeAll(async () => {
    server = await startTokenServer(undefined, { signingKeyPem: keys });
  });
  afterAll(() => server.close());

  it('signs with its first key and publishes every one', async () => {
    const { client } = await signedIn(server, 'file@example.com');
    const { token } = (await tokenOf(client)).body;
    expect(decodeProtectedHeader(token).alg).toBe('EdDSA');
    const set = await keySet(server);
    expect(set.keys.map((key) => key.alg)).toEqual(['EdDSA', 'ES256']);
    await expect(jwtVerify(token, createLocalJWKSet(set))).resolves.toBeTruthy();
    expect(await activeOf(server, token)).toBe(true);
    // Nothing is kept in the database.
    expect(await server.db.selectFrom('token_signing_keys').selectAll().execute()).toEqual([]);
    await new Client(server.url).signIn('file@example.com', password);
  });

  it.each([
    ['not a key', 'holds no PEM block'],
    [
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
        format: 'pem',
        type: 'pkcs8',
      }) as string,
      'a key of type rsa cannot sign tokens here',
    ],
    [
      generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({
        format: 'pem',
        type: 'spki',
      }) as string,
      'is a PUBLIC KEY, not a private key',
    ],
  ])('a bad key stops the start, naming the variable and never quoting it (%#)', (value, says) => {
    const result = parseConfig({ TOKEN_SIGNING_KEY: value });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems.join('\n')).toContain(`TOKEN_SIGNING_KEY: `);
    expect(problems.join('\n')).toContain(says);
    expect(problems.join('\n')).not.toContain('MII');
  });
});
