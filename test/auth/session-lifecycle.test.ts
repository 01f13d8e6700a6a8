import { decode as authjsDecode, encode as authjsEncode } from '@auth/core/jwt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, fakeClock, startServer, testSecret, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';
const day = 86400_000;

describe('session lifetime and revocation', () => {
  let servers: TestServer[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });
  async function start(options: Parameters<typeof startServer>[0] = {}) {
    const server = await startServer(options);
    servers.push(server);
    return server;
  }

  it('changing the password, disabling or removing the user ends every session', async () => {
    const server = await start();
    const id = await addUser(server, 'ada@example.com', password);
    const a = new Client(server.url);
    const b = new Client(server.url);
    await a.signIn('ada@example.com', password);
    await b.signIn('ada@example.com', password);
    await server.services.users.setPasswordHash(
      id,
      await server.services.hasher.hash('another long password'),
    );
    expect(await a.session()).toBeNull();
    expect(await b.session()).toBeNull();

    await a.signIn('ada@example.com', 'another long password');
    await server.services.users.setDisabled(id, true);
    expect(await a.session()).toBeNull();

    await server.services.users.setDisabled(id, false);
    await a.signIn('ada@example.com', 'another long password');
    expect(await a.session()).not.toBeNull();
    await server.services.users.remove(id);
    expect(await a.session()).toBeNull();
  });

  it('an idle session ends after SESSION_MAX_AGE and is still valid a second before', async () => {
    const clock = fakeClock();
    const server = await start({ now: clock.now });
    await addUser(server, 'ada@example.com', password);
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const cookie = client.sessionCookie();
    // The token's own exp decides idle expiry; Auth.js allows 15 s of clock skew.
    clock.advance(30 * day - 1000);
    const stillValid = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: `authjs.session-token=${cookie}` },
    });
    expect(await stillValid.json()).not.toBeNull();
    clock.advance(1000 + 16_000);
    const expired = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: `authjs.session-token=${cookie}` },
    });
    expect(await expired.json()).toBeNull();
  });

  it('refreshing every day cannot stretch a session past SESSION_ABSOLUTE_MAX_AGE', async () => {
    const clock = fakeClock();
    const server = await start({
      now: clock.now,
      config: {
        session: {
          maxAgeSeconds: 3 * 86400,
          updateAgeSeconds: 0,
          absoluteMaxAgeSeconds: 10 * 86400,
        },
      },
    });
    await addUser(server, 'ada@example.com', password);
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const signedInAt = clock.now();
    let last: { expires: string } | null = null;
    for (let d = 1; d < 10; d += 1) {
      clock.advance(day);
      last = (await client.session()) as { expires: string } | null;
      expect(last).not.toBeNull();
    }
    // The reported expiry never passes the cap.
    expect(Date.parse(last!.expires)).toBeLessThanOrEqual(signedInAt + 10 * day);
    clock.advance(day);
    expect(await client.session()).toBeNull();
  });

  it('a cookie made with a rotated-out secret is accepted while listed, then rejected, never a 5xx', async () => {
    const oldSecret = 'old-secret-0123456789abcdefghijklmnopqrstuvwxyz';
    const first = await start({ config: { authSecrets: [oldSecret] } });
    await addUser(first, 'ada@example.com', password);
    const client = new Client(first.url);
    await client.signIn('ada@example.com', password);
    const cookie = client.sessionCookie();

    const rotating = await start({
      databaseUrl: `file:${first.dir}/test.db`,
      config: { authSecrets: [testSecret, oldSecret] },
    });
    const accepted = await fetch(`${rotating.url}/api/auth/session`, {
      headers: { cookie: `authjs.session-token=${cookie}` },
    });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ user: { email: 'ada@example.com' } });

    const rotated = await start({ databaseUrl: `file:${first.dir}/test.db` });
    const rejected = await fetch(`${rotated.url}/api/auth/session`, {
      headers: { cookie: `authjs.session-token=${cookie}` },
    });
    expect(rejected.status).toBe(200);
    expect(await rejected.json()).toBeNull();
  });

  it('a forged token with a valid encryption but no session id reads as no session', async () => {
    const server = await start();
    await addUser(server, 'ada@example.com', password);
    const token = await authjsEncode({
      token: { sub: 'someone', email: 'ada@example.com', name: 'x' },
      secret: testSecret,
      salt: 'authjs.session-token',
    });
    const response = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: `authjs.session-token=${token}` },
    });
    expect(await response.json()).toBeNull();
  });

  it('tampered, truncated, empty or alg:none tokens read as null and clear the cookie, never a 5xx', async () => {
    const server = await start();
    await addUser(server, 'ada@example.com', password);
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const token = client.sessionCookie() as string;
    const parts = token.split('.');
    const flip = (s: string) => (s.length === 0 ? 'A' : (s[0] === 'A' ? 'B' : 'A') + s.slice(1));
    const variants = [
      ...parts.map((_, i) => parts.map((p, j) => (i === j ? flip(p) : p)).join('.')),
      token.slice(0, token.length - 10),
      '',
      `${Buffer.from('{"alg":"none"}').toString('base64url')}.${parts.slice(1).join('.')}`,
      `${Buffer.from('{"alg":"dir","enc":"A128GCM"}').toString('base64url')}.${parts.slice(1).join('.')}`,
    ];
    for (const value of variants) {
      const response = await fetch(`${server.url}/api/auth/session`, {
        headers: { cookie: `authjs.session-token=${value}` },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toBeNull();
      if (value !== '') {
        const cleared = response.headers
          .getSetCookie()
          .find((c) => c.startsWith('authjs.session-token='));
        expect(cleared).toMatch(/Max-Age=0/);
      }
    }
    const logText = server.logs.join('');
    expect(logText).not.toContain(token.slice(20, 60));
  });

  it.each([
    ['__Secure-', undefined],
    ['__Host-', '__Host-'],
  ] as const)(
    'over https the session cookie is %sauthjs.session-token (Secure, HttpOnly, Lax, Path=/, no Domain) and the CSRF cookie __Host-',
    async (prefix, setting) => {
      const server = await start({
        config: {
          authUrl: 'https://auth.example.com',
          ...(setting === undefined ? {} : { sessionCookiePrefix: setting }),
        },
      });
      await addUser(server, 'ada@example.com', password);
      const client = new Client(server.url);
      const csrf = await client.get('/api/auth/csrf');
      const csrfCookie = csrf.headers
        .getSetCookie()
        .find((c) => c.startsWith('__Host-authjs.csrf-token='));
      expect(csrfCookie).toMatch(/Secure/);
      const response = await client.signIn('ada@example.com', password);
      expect(response.status).toBe(200);
      const session = response.headers
        .getSetCookie()
        .find((c) => c.startsWith(`${prefix}authjs.session-token=`));
      expect(session).toBeDefined();
      expect(session).toMatch(/; Secure/);
      expect(session).toMatch(/HttpOnly/);
      expect(session).toMatch(/SameSite=Lax/);
      expect(session).toMatch(/Path=\//);
      expect(session).not.toMatch(/Domain=/i);
      expect(response.headers.get('strict-transport-security')).toMatch(/max-age=31536000/);
      expect(((await response.json()) as { url: string }).url).toBe('https://auth.example.com');
      expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });

      // The name is also the token's key-derivation salt: an unchanged Auth.js / next-auth
      // server (default salt `__Secure-authjs.session-token`) reads the default cookie, and
      // reads the __Host- one only when told its name.
      const token = session!.split(';')[0]!.split('=').slice(1).join('=');
      const decoded = await authjsDecode({
        token,
        secret: testSecret,
        salt: '__Secure-authjs.session-token',
      }).catch(() => null);
      if (prefix === '__Secure-') expect(decoded).toMatchObject({ email: 'ada@example.com' });
      else expect(decoded).toBeNull();
      const named = await authjsDecode({
        token,
        secret: testSecret,
        salt: `${prefix}authjs.session-token`,
      });
      expect(named).toMatchObject({ email: 'ada@example.com' });
    },
  );

  it('a fresh token sealed with an older listed secret is re-sealed with the current one on its next read', async () => {
    const olderSecret = 'an-older-secret-still-listed-0123456789abcdef';
    const server = await start({ config: { authSecrets: [testSecret, olderSecret] } });
    await addUser(server, 'ada@example.com', password);
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const salt = 'authjs.session-token';
    const claims = await authjsDecode({ token: client.sessionCookie()!, secret: testSecret, salt });
    const token = Object.fromEntries(
      Object.entries(claims!).filter(([name]) => !['iat', 'exp', 'jti'].includes(name)),
    );
    const old = await authjsEncode({ token, secret: olderSecret, salt });
    const response = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: `${salt}=${old}` },
    });
    expect(await response.json()).toMatchObject({ user: { email: 'ada@example.com' } });
    const renewed = response.headers
      .getSetCookie()
      .find((line) => line.startsWith(`${salt}=`))
      ?.split(';')[0]
      ?.slice(salt.length + 1);
    expect(renewed).toBeDefined();
    // Sealed with the current secret alone: it survives the older secret being dropped.
    expect(await authjsDecode({ token: renewed!, secret: testSecret, salt })).toMatchObject({
      email: 'ada@example.com',
    });
    const after = await start({
      config: { authSecrets: [testSecret] },
      databaseUrl: `file:${server.dir}/test.db`,
    });
    const read = await fetch(`${after.url}/api/auth/session`, {
      headers: { cookie: `${salt}=${renewed}` },
    });
    expect(await read.json()).toMatchObject({ user: { email: 'ada@example.com' } });
  });

  it('over https a cookie under the other prefix is not read as a session', async () => {
    const server = await start({ config: { authUrl: 'https://auth.example.com' } });
    await addUser(server, 'ada@example.com', password);
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const token = client.cookies.get('__Secure-authjs.session-token');
    expect(token).toBeDefined();
    const response = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: `__Host-authjs.session-token=${token}` },
    });
    expect(await response.json()).toBeNull();
  });
});
