import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';

function headerNames(response: Response): string[] {
  const names: string[] = [];
  response.headers.forEach((_value, name) => {
    if (name !== 'date') names.push(name);
  });
  return names.sort();
}

describe('sign-in, session and sign-out over HTTP', () => {
  let server: TestServer;
  let userId: string;
  beforeAll(async () => {
    server = await startServer();
    userId = await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
    await addUser(server, 'off@example.com', password, 'Disabled');
    const off = await server.services.users.findByEmail('off@example.com');
    await server.services.users.setDisabled(off!.id, true);
  });
  afterAll(() => server.close());

  it.each(['/api/auth/signin/credentials', '/api/auth/callback/credentials'])(
    'a plain form post to %s signs in with a 302 and a session cookie',
    async (path) => {
      const client = new Client(server.url);
      const csrfToken = await client.csrfToken();
      const response = await client.postForm(path, {
        csrfToken,
        email: 'ada@example.com',
        password,
        callbackUrl: `${server.url}/dashboard`,
      });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(`${server.url}/dashboard`);
      expect(response.headers.get('content-type')).toBeNull();
      expect(await response.text()).toBe('');
      const cookie = response.headers
        .getSetCookie()
        .find((c) => c.startsWith('authjs.session-token='));
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Lax/);
      expect(cookie).toMatch(/Path=\//);
      expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
    },
  );

  it('with X-Auth-Return-Redirect the answer is 200 {url}, as Auth.js clients expect', async () => {
    const client = new Client(server.url);
    const response = await client.signIn(
      'ada@example.com',
      password,
      '/api/auth/signin/credentials',
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ url: server.url });
    expect(client.sessionCookie()).toBeDefined();
  });

  it('the session is exactly {user: {id, email, name}, expires}', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const response = await client.get('/api/auth/session');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toContain('no-store');
    const body = (await response.json()) as { user: unknown; expires: string };
    expect(Object.keys(body).sort()).toEqual(['expires', 'user']);
    expect(body.user).toEqual({ id: userId, email: 'ada@example.com', name: 'Ada Lovelace' });
    const expires = Date.parse(body.expires);
    expect(expires).toBeGreaterThan(Date.now() + 29 * 86400_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * 86400_000 + 5000);
  });

  it('without a session the session route answers JSON null', async () => {
    const response = await fetch(`${server.url}/api/auth/session`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('null');
  });

  it('GET /api/auth/csrf gives a token and its double-submit cookie', async () => {
    const response = await fetch(`${server.url}/api/auth/csrf`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { csrfToken: string };
    expect(body.csrfToken).toMatch(/^[0-9a-f]{64}$/);
    expect(response.headers.getSetCookie().some((c) => c.startsWith('authjs.csrf-token='))).toBe(
      true,
    );
  });

  it('email is matched after trim, NFKC and lower-casing', async () => {
    const client = new Client(server.url);
    await client.signIn('  ADA@Example.COM ', password);
    expect(await client.session()).toMatchObject({ user: { id: userId } });
  });

  it('unknown email, wrong password and disabled account get the same answer', async () => {
    const answers = [];
    for (const [email, pass] of [
      ['nobody@example.com', password],
      ['ada@example.com', 'wrong password, long enough'],
      ['off@example.com', password],
    ] as const) {
      const client = new Client(server.url);
      const response = await client.signIn(email, pass);
      answers.push({
        status: response.status,
        body: await response.text(),
        cookieNames: response.headers
          .getSetCookie()
          .map((c) => c.split('=')[0])
          .sort(),
        headerNames: headerNames(response),
        session: await client.session(),
      });
    }
    expect(answers[0]).toEqual({
      status: 200,
      body: JSON.stringify({
        url: `${server.url}/api/auth/signin?error=CredentialsSignin&code=credentials`,
      }),
      cookieNames: expect.any(Array) as unknown,
      headerNames: expect.any(Array) as unknown,
      session: null,
    });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it('a plain form post with a wrong password redirects to the sign-in page with the error', async () => {
    const client = new Client(server.url);
    const csrfToken = await client.csrfToken();
    const response = await client.postForm('/api/auth/signin/credentials', {
      csrfToken,
      email: 'ada@example.com',
      password: 'not the password at all',
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(
      `${server.url}/api/auth/signin?error=CredentialsSignin&code=credentials`,
    );
    expect(client.sessionCookie()).toBeUndefined();
  });

  it.each([
    ['no csrfToken', {}],
    ['a csrfToken from another client', { csrfToken: 'f'.repeat(64) }],
  ])('sign-in with %s is refused with MissingCSRF and no session', async (_name, tokenFields) => {
    const client = new Client(server.url);
    await client.csrfToken();
    const response = await client.postForm('/api/auth/callback/credentials', {
      ...tokenFields,
      email: 'ada@example.com',
      password,
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(
      `${server.url}/api/auth/signin?error=MissingCSRF`,
    );
    expect(client.sessionCookie()).toBeUndefined();
    expect(await client.session()).toBeNull();
  });

  it('sign-out clears the cookie, and a copy taken before sign-out reads as no session', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const copied = client.sessionCookie();
    expect(copied).toBeDefined();
    const response = await client.signOut();
    expect(response.status).toBe(200);
    expect(client.sessionCookie()).toBeUndefined();
    const replay = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: `authjs.session-token=${copied}` },
    });
    expect(await replay.json()).toBeNull();
  });

  it('sign-out without a CSRF token ends nothing; GET shows a confirmation page only', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const forced = await client.postForm('/api/auth/signout', {});
    expect(forced.headers.get('location')).toContain('error=MissingCSRF');
    const page = await client.get('/api/auth/signout');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
  });

  it('the built-in sign-in page shows email and password fields', async () => {
    const response = await fetch(`${server.url}/api/auth/signin`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await response.text();
    expect(html).toMatch(
      /<input[^>]*name="email"[^>]*type="email"|<input[^>]*type="email"[^>]*name="email"/,
    );
    expect(html).toMatch(/type="password"/);
    expect(html).toContain('/api/auth/callback/credentials');
  });

  it('a callbackUrl on a foreign origin is not followed', async () => {
    const client = new Client(server.url);
    const csrfToken = await client.csrfToken();
    const response = await client.postForm('/api/auth/callback/credentials', {
      csrfToken,
      email: 'ada@example.com',
      password,
      callbackUrl: 'https://evil.example/steal',
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(server.url);
  });

  it('signing in again while holding a session issues a new one and ends the old', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const first = client.sessionCookie();
    await client.signIn('ada@example.com', password);
    const second = client.sessionCookie();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    const old = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: `authjs.session-token=${first}` },
    });
    expect(await old.json()).toBeNull();
    expect(await client.session()).toMatchObject({ user: { id: userId } });
  });

  it('signing in again ends the held session also when it arrives as chunked cookies', async () => {
    const holder = new Client(server.url);
    await holder.signIn('ada@example.com', password);
    const first = holder.sessionCookie()!;
    // The same token as Auth.js's SessionStore would split it: .0, .1, …
    const cut = Math.floor(first.length / 2);
    const client = new Client(server.url);
    client.cookies.set('authjs.session-token.1', first.slice(cut));
    client.cookies.set('authjs.session-token.0', first.slice(0, cut));
    // Read without the jar: Auth.js would re-issue the chunks as one cookie.
    const chunked = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: client.cookieHeader() },
    });
    expect(await chunked.json()).toMatchObject({ user: { id: userId } });
    await client.signIn('ada@example.com', password);
    expect(client.sessionCookie()).not.toBe(first);
    const old = await fetch(`${server.url}/api/auth/session`, {
      headers: { cookie: `authjs.session-token=${first}` },
    });
    expect(await old.json()).toBeNull();
  });

  it('JSON bodies sign in like forms (Auth.js parses JSON), CSRF still required', async () => {
    const client = new Client(server.url);
    const csrfToken = await client.csrfToken();
    const response = await client.request('/api/auth/callback/credentials', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-return-redirect': '1' },
      body: JSON.stringify({ csrfToken, email: 'ada@example.com', password }),
    });
    expect(response.status).toBe(200);
    expect(await client.session()).toMatchObject({ user: { id: userId } });
  });

  it('a client-sent session update cannot change what the session says', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    const csrfToken = await client.csrfToken();
    const response = await client.request('/api/auth/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ csrfToken, data: { name: 'Mallory', email: 'm@evil.example' } }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      user: { id: userId, email: 'ada@example.com', name: 'Ada Lovelace' },
    });
    expect(await client.session()).toMatchObject({ user: { name: 'Ada Lovelace' } });
  });
});
