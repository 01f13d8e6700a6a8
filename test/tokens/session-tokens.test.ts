import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { generateKeyPairSync, createHmac } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { databaseBackends } from '../helpers/backends.js';
import { errorCode, postWithCsrf } from '../helpers/account-requests.js';
import type { TestServer } from '../helpers/server.js';
import {
  activeOf,
  introspect,
  password,
  signedIn,
  tokenServerFor,
  tokenOf,
} from './token-helpers.js';

// GET /api/auth/token, the key set and its metadata, and introspection (adoption spec §4),
// black-box over HTTP on SQLite and PostgreSQL: tokens verified by jose against the live key
// set (and by PyJWT when Debian's python3-jwt is there), ended at once by what ends a session.

const pyjwt =
  spawnSync('/usr/bin/python3', ['-c', 'import jwt, cryptography']).status === 0
    ? '/usr/bin/python3'
    : undefined;

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe.each(databaseBackends('session-tokens'))('session tokens on $name', (backend) => {
  const serverOf = tokenServerFor(backend);
  let server: TestServer;
  beforeEach(() => {
    if (!backend.skip) server = serverOf();
  });

  it.skipIf(backend.skip)(
    'a session gets a short-lived JWT that jose verifies against the live key set',
    async () => {
      const { client, userId } = await signedIn(server, 'ada@example.com');
      const { response, body } = await tokenOf(client);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const keys = createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks.json`));
      const { payload, protectedHeader } = await jwtVerify(body.token, keys, {
        issuer: server.url,
        audience: server.url,
      });
      expect(protectedHeader.alg).toBe('ES256');
      expect(payload.sub).toBe(userId);
      expect(payload.email).toBe('ada@example.com');
      expect(payload.amr).toEqual(['pwd']);
      expect(payload.exp! - payload.iat!).toBe(300);
      expect(new Date(body.expires).getTime()).toBe(payload.exp! * 1000);
      // `sid` is the session's public id, the one the sessions list shows: never the cookie's.
      const sessions = (await (await client.get('/api/account/sessions')).json()) as {
        sessions: { id: string; current: boolean }[];
      };
      expect(payload.sid).toBe(sessions.sessions.find((s) => s.current)?.id);
    },
  );

  it.skipIf(backend.skip)(
    'no session, another site, or a bearer that is no token: refused',
    async () => {
      const stranger = new Client(server.url);
      expect(await errorCode(await stranger.get('/api/auth/token'))).toBe('401 unauthenticated');
      const { client } = await signedIn(server, 'cross@example.com');
      expect(
        await errorCode(await client.get('/api/auth/token', { 'sec-fetch-site': 'cross-site' })),
      ).toBe('403 cross_site');
      // A bearer is the credential when sent: a wrong one is not quietly replaced by the cookie.
      const wrong = await client.get('/api/auth/token', { authorization: 'Bearer nonsense' });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toContain('invalid_token');
    },
  );

  it.skipIf(backend.skip)('the key set and the metadata that finds it', async () => {
    for (const path of ['/api/auth/jwks.json', '/.well-known/jwks.json']) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=300');
      const set = (await response.json()) as { keys: Record<string, string>[] };
      expect(set.keys.length).toBeGreaterThan(0);
      for (const key of set.keys) {
        expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
        expect(key).not.toHaveProperty('d');
      }
    }
    for (const path of [
      '/.well-known/openid-configuration',
      '/api/auth/.well-known/openid-configuration',
    ]) {
      const metadata = (await (await fetch(`${server.url}${path}`)).json()) as Record<
        string,
        string
      >;
      expect(metadata.issuer).toBe(server.url);
      expect(metadata.jwks_uri).toBe(`${server.url}/api/auth/jwks.json`);
      expect(metadata.introspection_endpoint).toBe(`${server.url}/api/auth/introspect`);
    }
  });

  it.skipIf(backend.skip || pyjwt === undefined)(
    'PyJWT verifies it too, from the key set',
    async () => {
      const { client, userId } = await signedIn(server, 'py@example.com');
      const { body } = await tokenOf(client);
      const script = `
import jwt, sys
keys = jwt.PyJWKClient(sys.argv[1])
token = sys.argv[2]
claims = jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["ES256"], audience=sys.argv[3], issuer=sys.argv[3])
print(claims["sub"])`;
      // Not spawnSync: the server answering PyJWT's fetch of the key set is in this process.
      const run = await promisify(execFile)(
        pyjwt as string,
        ['-c', script, `${server.url}/api/auth/jwks.json`, body.token, server.url],
        { encoding: 'utf8', timeout: 20_000 },
      );
      expect(run.stderr).toBe('');
      expect(run.stdout.trim()).toBe(userId);
    },
  );

  it.skipIf(backend.skip)(
    'introspection: active while the session lives, inactive at once after sign-out',
    async () => {
      const { client, userId } = await signedIn(server, 'grace@example.com');
      const { body } = await tokenOf(client);
      const answer = await introspect(server, body.token);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      const active = (await answer.json()) as Record<string, unknown>;
      expect(active).toMatchObject({ active: true, sub: userId, username: 'grace@example.com' });
      expect(await client.signOut()).toHaveProperty('status', 200);
      expect(await activeOf(server, body.token)).toBe(false);
      // The same token still verifies by its signature until its TTL: introspection is the
      // answer that knows sooner.
      const keys = createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks.json`));
      await expect(jwtVerify(body.token, keys)).resolves.toBeTruthy();
    },
  );

  it.skipIf(backend.skip)(
    'introspection: a password change, an operator revoke and a disable end the token at once',
    async () => {
      const { client, userId } = await signedIn(server, 'linus@example.com');
      const first = (await tokenOf(client)).body.token;
      // Another session of the same person, ended by the password change made in the first.
      const other = new Client(server.url);
      await other.signIn('linus@example.com', password);
      const second = (await tokenOf(other)).body.token;
      const changed = await postWithCsrf(client, '/api/account/password/change', {
        currentPassword: password,
        newPassword: 'a brand new passphrase for linus',
      });
      expect(changed.status).toBe(200);
      // Both: the session the change was made in goes on under a new id (its cookie re-issued).
      expect(await activeOf(server, second)).toBe(false);
      expect(await activeOf(server, first)).toBe(false);
      const kept = (await tokenOf(client)).body.token;
      expect(await activeOf(server, kept)).toBe(true);
      await server.services.sessions.revokeAllForUser(userId, Date.now());
      expect(await activeOf(server, kept)).toBe(false);

      const { client: third, userId: thirdId } = await signedIn(server, 'kay@example.com');
      const hers = (await tokenOf(third)).body.token;
      expect(await activeOf(server, hers)).toBe(true);
      await server.services.users.setDisabled(thirdId, true);
      expect(await activeOf(server, hers)).toBe(false);
    },
  );

  it.skipIf(backend.skip)(
    'introspection: a wrong and a missing credential get the same answer; cookies open nothing',
    async () => {
      const { client } = await signedIn(server, 'eve@example.com');
      const { token } = (await tokenOf(client)).body;
      const wrong = await introspect(server, token, 'x'.repeat(40));
      const missing = await introspect(server, token, null);
      expect(wrong.status).toBe(401);
      expect(missing.status).toBe(401);
      const strip = (text: string) => text.replace(/"requestId":"[^"]*"/, '');
      expect(strip(await wrong.text())).toBe(strip(await missing.text()));
      // The session cookie is no credential here, and no CSRF token is asked for.
      const withCookie = await client.request('/api/auth/introspect', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      });
      expect(withCookie.status).toBe(401);
      const noToken = await introspect(server, '');
      expect(noToken.status).toBe(400);
    },
  );

  it.skipIf(backend.skip)('hostile tokens are never active', async () => {
    const { client } = await signedIn(server, 'mallory@example.com');
    const real = (await tokenOf(client)).body.token;
    const claims = decodeJwt(real);
    const header = decodeProtectedHeader(real);
    const [, , signature] = real.split('.');
    const set = (await (await fetch(`${server.url}/api/auth/jwks.json`)).json()) as {
      keys: Record<string, string>[];
    };
    const publicKeyText = JSON.stringify(set.keys[0]);
    const hs256 = (() => {
      const head = b64({ alg: 'HS256', typ: 'JWT', kid: header.kid });
      const body = b64(claims);
      const mac = createHmac('sha256', publicKeyText).update(`${head}.${body}`).digest('base64url');
      return `${head}.${body}.${mac}`;
    })();
    const elsewhere = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const hostile = [
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
      hs256,
      // The claims changed under the real signature.
      `${real.split('.')[0]}.${b64({ ...claims, sub: 'someone-else' })}.${signature}`,
      // A kid not in the set, and a key of another instance under the real kid.
      await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'not-a-key' })
        .sign(elsewhere),
      await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: header.kid! })
        .sign(elsewhere),
      real.slice(0, -3),
      'gat_not-a-token',
      '',
    ];
    for (const token of hostile.filter((t) => t !== '')) {
      expect(await activeOf(server, token), token.slice(0, 40)).toBe(false);
    }
    expect(await activeOf(server, real)).toBe(true);
  });
});
