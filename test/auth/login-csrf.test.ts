import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';

describe("login CSRF: a sign-in post must come from the service's own origin", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password, 'Ada');
  });
  afterAll(() => server.close());

  it('a cross-site sign-in post is refused even with a valid token pair (login CSRF)', async () => {
    const attacker = new Client(server.url);
    const csrfToken = await attacker.csrfToken();
    const response = await attacker.postForm(
      '/api/auth/callback/credentials',
      { csrfToken, email: 'ada@example.com', password },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    );
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('cross_site');
    expect(attacker.sessionCookie()).toBeUndefined();
  });

  it.each([
    [{ origin: 'https://evil.example' }],
    [{ origin: 'null' }],
    [{ origin: `${'http://127.0.0.1'}:1` }],
    [{ 'sec-fetch-site': 'same-site' }],
    [{ 'sec-fetch-site': 'CROSS-SITE' }],
    [{ 'sec-fetch-site': 'Same-Site', origin: 'SAME' }],
  ])('a sign-in post with %j is refused with 403 cross_site (login CSRF)', async (headers) => {
    const attacker = new Client(server.url);
    const csrfToken = await attacker.csrfToken();
    const sent = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, value === 'SAME' ? server.url : value]),
    );
    for (const path of ['/api/auth/callback/credentials', '/api/auth/signin/credentials']) {
      const response = await attacker.postForm(
        path,
        { csrfToken, email: 'ada@example.com', password },
        sent,
      );
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'cross_site',
      );
    }
    expect(attacker.sessionCookie()).toBeUndefined();
  });

  it.each([
    [{ origin: 'SAME' }],
    [{ origin: 'SAME', 'sec-fetch-site': 'Same-Origin' }],
    [{ 'sec-fetch-site': 'none' }],
  ])("a sign-in post with %j from the service's own origin signs in", async (headers) => {
    const sent = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, value === 'SAME' ? server.url : value]),
    );
    const client = new Client(server.url, sent);
    expect((await client.signIn('ada@example.com', password)).status).toBe(200);
    expect(await client.session()).not.toBeNull();
  });

  it('same-origin posts with Sec-Fetch-Site still sign in', async () => {
    const client = new Client(server.url, { 'sec-fetch-site': 'same-origin' });
    expect((await client.signIn('ada@example.com', password)).status).toBe(200);
    expect(await client.session()).not.toBeNull();
  });
});
