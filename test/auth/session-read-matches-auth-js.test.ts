import { decode as authjsDecode, encode as authjsEncode } from '@auth/core/jwt';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, testSecret, type TestServer } from '../helpers/server.js';
import { mintSession } from '../helpers/sessions.js';
import { cookieShape } from '../helpers/compare.js';
import { csrfPair } from '../helpers/fuzz-requests.js';

const password = 'correct horse battery staple';
const day = 86400_000;
// Listed after the current secret on both servers: rotation, with old cookies still honoured.
const olderSecret = 'an-older-secret-still-listed-0123456789abcdef';
const salt = 'authjs.session-token';

interface Observed {
  status: number;
  body: string;
  headers: Record<string, string>;
  /** Set-Cookie lines with the value replaced by its kind: the values are random on both sides. */
  cookies: string[];
}

async function observe(url: string, path: string, cookie: string | undefined): Promise<Observed> {
  const response = await fetch(`${url}${path}`, {
    headers: cookie === undefined ? {} : { cookie },
  });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (
      name !== 'date' &&
      name !== 'set-cookie' &&
      name !== 'content-length' &&
      name !== 'keep-alive' &&
      name !== 'connection'
    )
      headers[name] = value;
  });
  return {
    status: response.status,
    // CSRF tokens are random on both sides; everything else must match to the byte.
    body: (await response.text()).replace(/"csrfToken":"[0-9a-f]{64}"/, '"csrfToken":"<csrf>"'),
    headers,
    cookies: response.headers.getSetCookie().map(cookieShape),
  };
}

/**
 * The fast read path against plain Auth.js: two servers on one database and one secret, one
 * with fast paths on (sync codec, dedicated session/CSRF answers), one with them off.
 */
describe('the session and CSRF read path answers exactly as Auth.js does', () => {
  let fast: TestServer;
  let plain: TestServer;
  let userId: string;
  beforeAll(async () => {
    // One public origin for both, so redirects and callback-url cookies can be compared.
    const authUrl = 'http://gatehouse.test';
    const authSecrets = [testSecret, olderSecret];
    fast = await startServer({ config: { fastPaths: true, authUrl, authSecrets } });
    plain = await startServer({
      config: { fastPaths: false, authUrl, authSecrets },
      databaseUrl: `file:${fast.dir}/test.db`,
    });
    userId = await addUser(fast, 'ada@example.com', password, 'Ada');
  });
  afterAll(async () => {
    await plain.close();
    await fast.close();
  });
  afterEach(() => vi.useRealTimers());

  async function signedIn(): Promise<Client> {
    const client = new Client(fast.url);
    await client.signIn('ada@example.com', password);
    return client;
  }

  /** Both servers see the same request at the same frozen instant. */
  async function both(path: string, cookie: string | undefined, at = Date.now()) {
    vi.useFakeTimers({ toFake: ['Date'], now: at });
    const a = await observe(fast.url, path, cookie);
    const b = await observe(plain.url, path, cookie);
    vi.useRealTimers();
    return { fast: a, plain: b };
  }

  it.each(['/api/auth/session', '/api/auth/csrf'])('%s with no cookie at all', async (path) => {
    const { fast: a, plain: b } = await both(path, undefined);
    expect(a).toEqual(b);
    expect(a.cookies.map((c) => c.split('=')[0])).toEqual([
      'authjs.csrf-token',
      'authjs.callback-url',
    ]);
  });

  it('a CSRF cookie issued by the fast path is honoured by Auth.js for sign-in', async () => {
    const client = new Client(fast.url);
    const token = await client.csrfToken();
    const response = await new Client(plain.url).postForm(
      '/api/auth/callback/credentials',
      { csrfToken: token, email: 'ada@example.com', password },
      { cookie: client.cookieHeader(), 'x-auth-return-redirect': '1' },
    );
    expect(response.status).toBe(200);
    expect(
      response.headers.getSetCookie().some((c) => c.startsWith('authjs.session-token=ey')),
    ).toBe(true);
  });

  it('a browser cookie jar with a valid session whose refresh is due', async () => {
    const client = await signedIn();
    const jar = `_ga=GA1.1.1.2; ${client.cookieHeader()}; theme=dark`;
    const { fast: a, plain: b } = await both('/api/auth/session', jar, Date.now() + 2 * day);
    expect(a).toEqual(b);
    expect(JSON.parse(a.body)).toMatchObject({
      user: { id: userId, email: 'ada@example.com', name: 'Ada' },
    });
    expect(a.cookies).toHaveLength(1);
    expect(a.cookies[0]).toMatch(
      /^authjs.session-token=<jwe>; Path=\/; Expires=.*; HttpOnly; SameSite=Lax$/,
    );
  });

  it('a fresh session is not re-issued; expires is the cookie real expiry', async () => {
    const signingIn = Date.now();
    const client = await signedIn();
    const issued = client.sessionCookie();
    const at = Date.now() + 60_000;
    const { fast: a, plain: b } = await both('/api/auth/session', client.cookieHeader(), at);
    expect(a.status).toBe(b.status);
    expect(a.headers).toEqual(b.headers);
    expect(a.cookies).toEqual([]);
    expect(b.cookies).toHaveLength(1); // Auth.js re-encodes on every read
    const body = JSON.parse(a.body) as { user: unknown; expires: string };
    expect(body.user).toEqual((JSON.parse(b.body) as { user: unknown }).user);
    // The cookie was issued with 30 days; a minute later it still expires when it said.
    const cookieExpiry = Date.parse(body.expires);
    expect(cookieExpiry).toBeLessThanOrEqual(at + 30 * day - 59_000);
    // Issued during the sign-in (to the second), however long that took on a loaded machine.
    expect(cookieExpiry).toBeGreaterThanOrEqual(signingIn + 30 * day - 1_000);
    expect(issued).toBeDefined();
  });

  it.each([
    ['expired', async (c: Client) => ({ cookie: c.cookieHeader(), at: Date.now() + 31 * day })],
    [
      'tampered',
      async (c: Client) => ({
        cookie: c
          .cookieHeader()
          .replace(
            /session-token=ey(.)/,
            (_m, ch: string) => `session-token=ey${ch === 'J' ? 'K' : 'J'}`,
          ),
        at: Date.now(),
      }),
    ],
    [
      'truncated',
      async (c: Client) => ({
        cookie: `authjs.session-token=${c.sessionCookie()!.slice(0, 100)}`,
        at: Date.now(),
      }),
    ],
    [
      'made with a secret no longer listed',
      async () => ({
        cookie: `authjs.session-token=${await authjsEncode({ token: { sub: 'x', sid: 'y', auth_time: 1 }, secret: 'an-old-secret-that-was-removed-0123456789', salt: 'authjs.session-token' })}`,
        at: Date.now(),
      }),
    ],
    [
      'revoked by sign-out elsewhere',
      async (c: Client) => {
        const cookie = c.cookieHeader();
        const copy = new Client(fast.url);
        copy.cookies.set('authjs.session-token', c.sessionCookie()!);
        await copy.signOut();
        return { cookie, at: Date.now() };
      },
    ],
    [
      'past the absolute cap',
      async (c: Client) => ({ cookie: c.cookieHeader(), at: Date.now() + 91 * day }),
    ],
    [
      'chunked into .0 and .1',
      async (c: Client) => {
        const t = c.sessionCookie()!;
        return {
          cookie: `authjs.session-token.0=${t.slice(0, 200)}; authjs.session-token.1=${t.slice(200)}`,
          at: Date.now(),
        };
      },
    ],
    [
      'chunked with a chunk missing',
      async (c: Client) => ({
        cookie: `authjs.session-token.0=${c.sessionCookie()!.slice(0, 200)}`,
        at: Date.now(),
      }),
    ],
  ])('a session cookie %s', async (_name, make) => {
    const client = await signedIn();
    const { cookie, at } = await make(client);
    const { fast: a, plain: b } = await both('/api/auth/session', cookie, at);
    expect(a).toEqual(b);
  });

  it('a session cookie made with an older secret still listed is read and re-issued by both', async () => {
    const client = await signedIn();
    const claims = await authjsDecode({ token: client.sessionCookie()!, secret: testSecret, salt });
    // The claims as Auth.js hands them to encode, which stamps iat, exp and jti itself.
    const token = Object.fromEntries(
      Object.entries(claims!).filter(([name]) => !['iat', 'exp', 'jti'].includes(name)),
    );
    const old = await authjsEncode({ token, secret: olderSecret, salt });
    const { fast: a, plain: b } = await both(
      '/api/auth/session',
      `${salt}=${old}`,
      Date.now() + 2 * day,
    );
    expect(a).toEqual(b);
    expect(JSON.parse(a.body)).toMatchObject({ user: { id: userId, email: 'ada@example.com' } });
    expect(a.cookies.filter((c) => c.startsWith(`${salt}=<jwe>; `))).toHaveLength(1);
  });

  it('a session of a disabled user', async () => {
    const id = await addUser(fast, 'dis@example.com', password);
    const client = new Client(fast.url);
    await client.signIn('dis@example.com', password);
    await fast.services.users.setDisabled(id, true);
    const { fast: a, plain: b } = await both('/api/auth/session', client.cookieHeader());
    expect(a).toEqual(b);
    expect(a.body).toBe('null');
  });

  it('a session whose refreshed token needs chunks is re-issued in chunks by both', async () => {
    const name = 'L'.repeat(4000);
    const id = await addUser(fast, 'long@example.com', password, name);
    const { token } = await mintSession(
      fast,
      { id, email: 'long@example.com', name },
      { secret: testSecret },
    );
    const cookie = `${salt}=${token}`;
    const { fast: a, plain: b } = await both('/api/auth/session', cookie, Date.now() + 2 * day);
    expect(a).toEqual(b);
    expect(a.cookies.filter((c) => c.startsWith(`${salt}`)).map((c) => c.split('=')[0])).toEqual([
      salt,
      `${salt}.0`,
      `${salt}.1`,
    ]);
  });

  it('a chunked but valid session is read by both', async () => {
    const client = await signedIn();
    const t = client.sessionCookie()!;
    const cookie = `authjs.session-token.0=${t.slice(0, 300)}; authjs.session-token.1=${t.slice(300)}`;
    const { fast: a, plain: b } = await both('/api/auth/session', cookie, Date.now() + 2 * day);
    expect(a.status).toBe(b.status);
    expect(a.body).toBe(b.body);
    expect(JSON.parse(a.body)).toMatchObject({ user: { id: userId } });
  });

  it.each<[string, (token: string, other: string) => string]>([
    ['a stray .9 chunk after it', (t) => `${salt}=${t}; ${salt}.9=x`],
    ['a stray .0 chunk before it', (t) => `${salt}.0=garbage; ${salt}=${t}`],
    ['a look-alike name (tokenX)', (t) => `${salt}X=y; ${salt}=${t}`],
    [
      'many strays, some of them empty',
      (t) => `${salt}.1=a; ${salt}.0=; ${salt}-other=b; ${salt}=${t}; ${salt}.10=c; ${salt}.2=`,
    ],
    [
      'chunks of another valid token',
      (t, o) => `${salt}.0=${o.slice(0, 300)}; ${salt}=${t}; ${salt}.1=${o.slice(300)}`,
    ],
  ])(
    'a valid session cookie with %s wins: read as the session by both, and kept',
    async (_name, jar) => {
      const client = await signedIn();
      const other = await signedIn();
      const cookie = jar(client.sessionCookie()!, other.sessionCookie()!);
      const { fast: a, plain: b } = await both('/api/auth/session', cookie, Date.now() + 2 * day);
      expect(a).toEqual(b);
      expect(JSON.parse(a.body)).toMatchObject({ user: { id: userId } });
      // Re-issued (its refresh is due), never cleared; the strays are left alone.
      expect(a.cookies.filter((c) => c.startsWith(salt))).toEqual([
        expect.stringMatching(
          /^authjs.session-token=<jwe>; Path=\/; Expires=.*; HttpOnly; SameSite=Lax$/,
        ),
      ]);
    },
  );

  it.each<[string, (token: string) => string]>([
    [
      'an unreadable session cookie beside valid chunks',
      (t) => `${salt}=x; ${salt}.0=${t.slice(0, 300)}; ${salt}.1=${t.slice(300)}`,
    ],
    ['an expired session cookie beside a stray', (t) => `${salt}=${t}; ${salt}.9=x`],
    ['only strays, no session cookie', () => `${salt}.9=x; ${salt}X=y`],
    ['a valid token in a stray chunk beside no session cookie', (t) => `${salt}.9=${t}`],
  ])('%s: read as Auth.js reads it, by both', async (name, jar) => {
    const client = await signedIn();
    const later = name.startsWith('an expired') ? 31 * day : 2 * day;
    const { fast: a, plain: b } = await both(
      '/api/auth/session',
      jar(client.sessionCookie()!),
      Date.now() + later,
    );
    expect(a).toEqual(b);
  });

  // Cookie values are %-decoded, so a token reaches the codec with any blanks a client puts in.
  // The codec skips blanks and padding in the IV, ciphertext and tag (jose does), but the
  // protected header is the tag's AAD and the encrypted key must be empty as sent: a cache that
  // remembered the clean token must answer each variant as Auth.js does, not as the clean one.
  const segments = (t: string) => t.split('.') as [string, string, string, string, string];
  const spaced = (s: string, blank: string) => `${s.slice(0, 8)}${blank}${s.slice(8)}`;
  it.each<[string, (token: string) => string, boolean]>([
    [
      'blanks in the ciphertext',
      (t) => {
        const [h, k, iv, ct, tag] = segments(t);
        return [h, k, iv, spaced(spaced(ct, '%20'), '%0A'), tag].join('.');
      },
      true,
    ],
    [
      'padding and a tab after the tag, a space in the IV',
      (t) => {
        const [h, k, iv, ct, tag] = segments(t);
        return [h, k, spaced(iv, '%20'), ct, `${tag}=%09`].join('.');
      },
      true,
    ],
    [
      'a space in the protected header',
      (t) => {
        const [h, ...rest] = segments(t);
        return [spaced(h, '%20'), ...rest].join('.');
      },
      false,
    ],
    [
      'a tab after the protected header',
      (t) => {
        const [h, ...rest] = segments(t);
        return [`${h}%09`, ...rest].join('.');
      },
      false,
    ],
    [
      'a space as the encrypted key',
      (t) => {
        const [h, , ...rest] = segments(t);
        return [h, '%20', ...rest].join('.');
      },
      false,
    ],
  ])(
    'a session token with %s, read after the clean token: as Auth.js reads it, by both',
    async (_name, variant, reads) => {
      const token = (await signedIn()).sessionCookie()!;
      const at = Date.now() + 2 * day;
      const clean = await both('/api/auth/session', `${salt}=${token}`, at);
      expect(JSON.parse(clean.fast.body)).toMatchObject({ user: { id: userId } });
      const { fast: a, plain: b } = await both(
        '/api/auth/session',
        `${salt}=${variant(token)}`,
        at,
      );
      expect(a).toEqual(b);
      expect(a.body === 'null', a.body).toBe(!reads);
    },
  );

  it.each([
    ['a relative callback-url cookie', 'authjs.callback-url=%2Fdashboard'],
    ['a foreign callback-url cookie', 'authjs.callback-url=https%3A%2F%2Fevil.example'],
    ['a broken CSRF cookie', 'authjs.csrf-token=abc%7Cdef'],
    ['duplicate cookie names', 'authjs.csrf-token=x; authjs.csrf-token=y'],
  ])('%s', async (_name, cookie) => {
    for (const path of ['/api/auth/session', '/api/auth/csrf']) {
      const { fast: a, plain: b } = await both(path, cookie);
      expect(a).toEqual(b);
    }
  });

  it('a kept CSRF cookie and callback-url cookie are not set again, on both', async () => {
    const client = new Client(fast.url);
    await client.csrfToken();
    const { fast: a, plain: b } = await both('/api/auth/csrf', client.cookieHeader());
    expect(a).toEqual(b);
    expect(a.cookies).toEqual([]);
  });

  it.each(['|', '|junk', '|a|b'])(
    'a verified CSRF pair with %j after it is kept, read after the bare pair, on both',
    async (tail) => {
      const pair = csrfPair('c'.repeat(64), [testSecret, olderSecret]);
      const cookie = (value: string) =>
        `authjs.csrf-token=${encodeURIComponent(value)}; authjs.callback-url=${encodeURIComponent('http://gatehouse.test')}`;
      await both('/api/auth/csrf', cookie(pair));
      const { fast: a, plain: b } = await both('/api/auth/csrf', cookie(`${pair}${tail}`));
      expect(a).toEqual(b);
      expect(a.cookies).toEqual([]);
    },
  );
});

describe.each(['__Secure-', '__Host-'] as const)(
  'over https with the %s session cookie, the read path answers exactly as Auth.js does',
  (sessionCookiePrefix) => {
    let fast: TestServer;
    let plain: TestServer;
    beforeAll(async () => {
      const config = { authUrl: 'https://gatehouse.test', sessionCookiePrefix };
      fast = await startServer({ config: { ...config, fastPaths: true } });
      plain = await startServer({
        config: { ...config, fastPaths: false },
        databaseUrl: `file:${fast.dir}/test.db`,
      });
      await addUser(fast, 'ada@example.com', password, 'Ada');
    });
    afterAll(async () => {
      await plain.close();
      await fast.close();
    });
    afterEach(() => vi.useRealTimers());

    it.each([
      ['/api/auth/session', 'no cookie', 0],
      ['/api/auth/csrf', 'no cookie', 0],
      // A fresh cookie is the one documented difference (not re-issued until its refresh is
      // due), tested over http above; a cookie due for refresh must match to the byte.
      ['/api/auth/session', 'a session cookie due for refresh', 2 * day],
    ])('%s with %s', async (path, kind, laterMs) => {
      let cookie: string | undefined;
      if (kind !== 'no cookie') {
        const client = new Client(fast.url);
        await client.signIn('ada@example.com', password);
        const token = client.cookies.get(`${sessionCookiePrefix}authjs.session-token`);
        expect(token).toBeDefined();
        cookie = `${sessionCookiePrefix}authjs.session-token=${token}`;
      }
      const at = Date.now() + laterMs;
      vi.useFakeTimers({ toFake: ['Date'], now: at });
      const a = await observe(fast.url, path, cookie);
      const b = await observe(plain.url, path, cookie);
      vi.useRealTimers();
      expect(a).toEqual(b);
      expect(a.status).toBe(200);
      if (kind !== 'no cookie') expect(a.body).toContain('ada@example.com');
      for (const line of a.cookies) {
        expect(line.split('=')[0]).toMatch(/^__(Host|Secure)-authjs\./);
        expect(line).toMatch(/; Secure/);
      }
    });

    it.each(['.9=x', 'X=y', '.0=garbage'])(
      'a valid session cookie with a stray %s planted beside it is read and kept by both',
      async (stray) => {
        const client = new Client(fast.url);
        await client.signIn('ada@example.com', password);
        const name = `${sessionCookiePrefix}authjs.session-token`;
        const cookie = `${name}${stray}; ${name}=${client.cookies.get(name)}`;
        vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2 * day });
        const a = await observe(fast.url, '/api/auth/session', cookie);
        const b = await observe(plain.url, '/api/auth/session', cookie);
        vi.useRealTimers();
        expect(a).toEqual(b);
        expect(a.body).toContain('ada@example.com');
        expect(a.cookies.filter((c) => c.startsWith(`${name}=`))).toEqual([
          expect.stringMatching(/=<jwe>; Path=\/; Expires=.*; HttpOnly; Secure; SameSite=Lax$/),
        ]);
      },
    );
  },
);
