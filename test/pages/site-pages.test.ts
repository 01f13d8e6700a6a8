import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { revokeUserSessions } from '../../src/sessions/session-store.js';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import {
  browser,
  browserAccept,
  follow,
  hidden,
  noticeOf,
  submitSignInForm,
  unescape,
} from './page-helpers.js';

// Issue 18, item 5: Gatehouse's own pages as a small site. Over real HTTP, as a browser sends
// it (Accept for HTML, its own Origin), against the app on a real SQLite file.

const password = 'correct horse battery staple';
const wrong = 'not the password at all';
const keptEmailCookie = 'gatehouse.signin-email';

/** A browser that signed in on the sign-in page. */
async function signedIn(server: TestServer, email = 'ada@example.com'): Promise<Client> {
  const client = browser(server);
  const response = await submitSignInForm(client, { email, password });
  expect(response.status).toBe(302);
  expect(client.sessionCookie()).toBeDefined();
  return client;
}

const setCookieNamed = (response: Response, name: string) =>
  response.headers.getSetCookie().find((line) => line.startsWith(`${name}=`));

describe('/ and the pages around it', () => {
  let server: TestServer;
  let adaId: string;
  beforeAll(async () => {
    server = await startServer();
    adaId = await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
    await addUser(server, 'grace@example.com', password, 'Grace Hopper');
  });
  afterAll(() => server.close());

  it('/ sends a visitor who is not signed in to the sign-in page (GET and HEAD)', async () => {
    for (const method of ['GET', 'HEAD']) {
      const response = await fetch(`${server.url}/`, { method, redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe(`${server.url}/api/auth/signin`);
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('/ answers other methods 405 with Allow, not 404', async () => {
    const response = await fetch(`${server.url}/`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toMatch(/GET/);
  });

  it('a sign-in on the sign-in page without callbackUrl lands on /, which says who is signed in', async () => {
    const client = browser(server);
    const response = await submitSignInForm(client, { email: 'ada@example.com', password });
    expect(response.headers.get('location')).toBe(server.url);
    const home = await client.get('/');
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(home.headers.get('cache-control')).toBe('no-store');
    expect(home.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src/);
    const html = await home.text();
    expect(html).toContain('<title>Gatehouse</title>');
    expect(html).toContain(
      '<p id="who" class="who">Signed in as <strong>Ada Lovelace</strong> (ada@example.com)</p>',
    );
    expect(html).not.toMatch(/<script/i);
    // The sign-out button is Auth.js's sign-out form, as the sign-out page posts it.
    expect(html).toContain('<form method="post" action="/api/auth/signout">');
    expect(await client.csrfToken()).toBe(hidden(html, 'csrfToken'));
    const signedOutUrl = `${server.url}/api/auth/signin?signedOut=1`;
    expect(hidden(html, 'callbackUrl')).toBe(signedOutUrl);
    const posted = await client.postForm('/api/auth/signout', {
      csrfToken: hidden(html, 'csrfToken'),
      callbackUrl: hidden(html, 'callbackUrl'),
    });
    expect(posted.status).toBe(302);
    expect(posted.headers.get('location')).toBe(signedOutUrl);
    expect(noticeOf(await follow(client, posted))).toEqual({
      role: 'status',
      text: 'You have signed out.',
    });
    expect(await client.session()).toBeNull();
    expect((await client.get('/')).status).toBe(303);
  });

  it('/ honours revocation: a session ended on the server is nobody', async () => {
    const client = await signedIn(server);
    expect((await client.get('/')).status).toBe(200);
    await revokeUserSessions(server.db, adaId, Date.now());
    const home = await client.get('/');
    expect(home.status).toBe(303);
    expect(home.headers.get('location')).toBe(`${server.url}/api/auth/signin`);
  });

  it('/ names whoever is signed in, escaped', async () => {
    const client = await signedIn(server, 'grace@example.com');
    const html = await (await client.get('/')).text();
    expect(html).toContain('Signed in as <strong>Grace Hopper</strong> (grace@example.com)');
  });

  it('the sign-in page greets a signed-in visitor: continue, sign out, or switch accounts', async () => {
    const client = await signedIn(server);
    const callbackUrl = `${server.url}/dashboard`;
    const html = await (
      await client.get(`/api/auth/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`)
    ).text();
    expect(html).toContain(
      '<p id="who">Signed in as <strong>Ada Lovelace</strong> (ada@example.com)</p>',
    );
    // Continue goes where the visitor was going.
    expect(html).toContain(`<a class="button" href="${callbackUrl}">Continue</a>`);
    expect(html).toMatch(/<button type="submit" class="secondary" [^>]*>Sign out<\/button>/);
    // The form to switch accounts is there, folded, and does not take the focus.
    expect(html).toContain('<details>\n<summary>Sign in as someone else</summary>');
    expect(html).toContain('action="/api/auth/callback/credentials"');
    expect(html).not.toContain('autofocus');
    // Switching accounts works from that form.
    const switched = await client.postForm('/api/auth/callback/credentials', {
      csrfToken: hidden(html, 'csrfToken'),
      callbackUrl,
      email: 'grace@example.com',
      password,
    });
    expect(switched.headers.get('location')).toBe(callbackUrl);
    expect(await client.session()).toMatchObject({ user: { email: 'grace@example.com' } });
  });

  it('without callbackUrl, the greeting continues to /', async () => {
    const client = await signedIn(server);
    const html = await (await client.get('/api/auth/signin')).text();
    expect(html).toContain(`<a class="button" href="${server.url}">Continue</a>`);
  });

  it('a signed-in visitor who fails to switch accounts sees the form open, with the error', async () => {
    const client = await signedIn(server);
    const response = await submitSignInForm(client, {
      email: 'grace@example.com',
      password: wrong,
    });
    const html = await follow(client, response);
    expect(html).toContain('<details open>');
    expect(noticeOf(html)?.text).toBe('Wrong email or password. Check both and try again.');
    expect(html).toContain('value="grace@example.com"');
    // The failed switch did not end the session held.
    expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
  });

  it('the sign-out page with nobody signed in says so and links to the sign-in page', async () => {
    for (const client of [browser(server), new Client(server.url)]) {
      const response = await client.get('/api/auth/signout');
      expect(response.status).toBe(200);
      const html = await response.text();
      expect(html).toContain('<title>You are not signed in – Gatehouse</title>');
      expect(html).toContain('<h1 id="page-title">You are not signed in</h1>');
      expect(html).toContain('<a class="button" href="/api/auth/signin">Sign in</a>');
      expect(html).not.toContain('<form');
    }
  });

  it('the sign-out page with a session names who and asks', async () => {
    const client = await signedIn(server);
    const html = await (await client.get('/api/auth/signout')).text();
    expect(html).toContain('<title>Sign out of Gatehouse?</title>');
    expect(html).toContain(
      '<p id="lead" class="lead">Signed in as <strong>Ada Lovelace</strong> (ada@example.com). You will need to sign in again to continue.</p>',
    );
    expect(html).toContain('<form method="post" action="/api/auth/signout">');
  });

  it('a revoked session counts as nobody on the sign-out page too', async () => {
    const client = await signedIn(server);
    await revokeUserSessions(server.db, adaId, Date.now());
    const html = await (await client.get('/api/auth/signout')).text();
    expect(html).toContain('<h1 id="page-title">You are not signed in</h1>');
  });
});

describe('the sign-in page keeps the email of a failed attempt', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ throttle: { emailMaxFailures: 3 } });
    await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
  });
  afterAll(() => server.close());

  it('in an HttpOnly cookie on the sign-in path, never in the URL, and focus goes to the password', async () => {
    const client = browser(server);
    const email = 'ada+"<tag>"@example.com';
    const response = await submitSignInForm(client, { email, password: wrong });
    expect(response.status).toBe(302);
    // Auth.js's own redirect, unchanged: no email in it.
    expect(response.headers.get('location')).toBe(
      `${server.url}/api/auth/signin?error=CredentialsSignin&code=credentials`,
    );
    expect(setCookieNamed(response, keptEmailCookie)).toBe(
      `${keptEmailCookie}=${encodeURIComponent(email)}; Path=/api/auth/signin; Max-Age=300; HttpOnly; SameSite=Lax`,
    );
    const html = await follow(client, response);
    expect(html).toContain(
      '<input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required value="ada+&quot;&lt;tag&gt;&quot;@example.com" aria-describedby="notice" aria-invalid="true">',
    );
    expect(html).toMatch(/<input id="password" [^>]* required autofocus aria-describedby/);
    expect(html).not.toContain('<details');
  });

  it('a throttled attempt keeps it too; a success forgets it', async () => {
    const client = browser(server);
    for (let i = 0; i < 3; i += 1) {
      await submitSignInForm(client, { email: 'ada@example.com', password: wrong });
    }
    const throttled = await submitSignInForm(client, { email: 'ada@example.com', password });
    expect(throttled.headers.get('location')).toMatch(/code=rate_limited&retryAfter=\d+$/);
    const html = await follow(client, throttled);
    expect(html).toContain('value="ada@example.com"');
    // Once the lock is over (here: a fresh server), a success clears the cookie.
    const other = await startServer();
    try {
      await addUser(other, 'ada@example.com', password);
      const browserThere = browser(other);
      await submitSignInForm(browserThere, { email: 'ada@example.com', password: wrong });
      expect(browserThere.cookies.has(keptEmailCookie)).toBe(true);
      const ok = await submitSignInForm(browserThere, { email: 'ada@example.com', password });
      expect(ok.headers.get('location')).toBe(other.url);
      expect(setCookieNamed(ok, keptEmailCookie)).toBe(
        `${keptEmailCookie}=; Path=/api/auth/signin; Max-Age=0; HttpOnly; SameSite=Lax`,
      );
      expect(browserThere.cookies.has(keptEmailCookie)).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('the sign-in page without an error does not fill it in', async () => {
    const client = browser(server);
    await submitSignInForm(client, { email: 'someone@example.com', password: wrong });
    expect(client.cookies.has(keptEmailCookie)).toBe(true);
    const html = await (await client.get('/api/auth/signin')).text();
    expect(html).not.toContain('someone@example.com');
  });

  it('Auth.js clients and JSON callers get exactly the answer they got before: no cookie', async () => {
    const apiHeaders: Record<string, string>[] = [
      { 'x-auth-return-redirect': '1' },
      { 'x-auth-return-redirect': '1', accept: browserAccept },
      {},
      { accept: 'application/json' },
    ];
    for (const headers of apiHeaders) {
      const client = new Client(server.url);
      const csrfToken = await client.csrfToken();
      const response = await client.postForm(
        '/api/auth/callback/credentials',
        { csrfToken, email: 'nobody@example.com', password: wrong },
        headers,
      );
      expect(setCookieNamed(response, keptEmailCookie)).toBeUndefined();
      expect(response.headers.getSetCookie().join('\n')).not.toContain('nobody');
    }
  });
});

describe('SIGNED_IN_URL', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const withSignedInUrl = (signedInUrl: string) =>
    startServer({
      config: {
        page: { productName: 'Gatehouse', accentColor: '#2563eb', logoUrl: undefined, signedInUrl },
      },
    });

  it('/ sends a signed-in visitor there; a sign-in without callbackUrl lands there', async () => {
    server = await withSignedInUrl('/app/home');
    await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
    const client = browser(server);
    const page = await (await client.get('/api/auth/signin')).text();
    expect(hidden(page, 'callbackUrl')).toBe(`${server.url}/app/home`);
    const response = await submitSignInForm(client, { email: 'ada@example.com', password });
    expect(response.headers.get('location')).toBe(`${server.url}/app/home`);
    const home = await client.get('/');
    expect(home.status).toBe(303);
    expect(home.headers.get('location')).toBe(`${server.url}/app/home`);
    // Nobody signed in: still the sign-in page.
    const anonymous = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(anonymous.headers.get('location')).toBe(`${server.url}/api/auth/signin`);
    // The greeting continues there too; a given callbackUrl still wins.
    const greeting = await (await client.get('/api/auth/signin')).text();
    expect(greeting).toContain(`<a class="button" href="${server.url}/app/home">Continue</a>`);
    const given = await (await client.get('/api/auth/signin?callbackUrl=%2Felsewhere')).text();
    expect(given).toContain(`<a class="button" href="${server.url}/elsewhere">Continue</a>`);
  });

  it('an absolute URL is used as it is', async () => {
    server = await withSignedInUrl('https://app.example.com/start');
    await addUser(server, 'ada@example.com', password);
    const client = await signedIn(server);
    const home = await client.get('/');
    expect(home.headers.get('location')).toBe('https://app.example.com/start');
  });

  it.each([
    ['/app', true],
    ['https://app.example.com/after-sign-in?x=1', true],
    ['http://localhost:3000/dashboard', true],
    ['', true],
    ['app', false],
    ['//evil.example/x', false],
    ['javascript:alert(1)', false],
    ['https://user:pw@app.example.com/', false],
    ['/a b', false],
    ['/\\evil.example', false],
  ])('SIGNED_IN_URL=%j is accepted: %s', (value, ok) => {
    const result = parseConfig({ SIGNED_IN_URL: value });
    expect(result.ok).toBe(ok);
    if (!result.ok) {
      expect(result.problems).toEqual([
        'SIGNED_IN_URL: must be a path like /app or an absolute http(s):// URL on the public origin (e.g. SIGNED_IN_URL=/app)',
      ]);
    } else {
      expect(result.config.page.signedInUrl).toBe(value === '' ? undefined : value);
    }
  });
});

describe('a cross-site sign-in or sign-out explains itself', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password);
  });
  afterAll(() => server.close());

  const foreign = 'http://localhost:3000';
  const warnings = () =>
    server.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.level === 40);

  it('a browser form post gets a 403 page that says why and what to set; one warning is logged', async () => {
    const before = warnings().length;
    const client = new Client(server.url, { accept: browserAccept, origin: foreign });
    const page = await (await client.get('/api/auth/signin')).text();
    const response = await client.postForm('/api/auth/callback/credentials', {
      csrfToken: hidden(page, 'csrfToken'),
      email: 'ada@example.com',
      password,
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    const html = await response.text();
    expect(html).toContain('<title>Error: Sign-in refused – Gatehouse</title>');
    expect(unescape(noticeOf(html)?.text ?? '')).toBe(
      `This sign-in form was sent from ${foreign}, but this service is at ${server.url}. To keep accounts safe, forms from another site are refused, so nothing happened.`,
    );
    expect(html).toContain(
      `set <code>AUTH_URL</code> to the origin the browser uses, e.g. <code>AUTH_URL=${foreign}</code>`,
    );
    expect(client.sessionCookie()).toBeUndefined();
    const logged = warnings().slice(before);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      path: '/api/auth/callback/credentials',
      origin: foreign,
      publicOrigin: server.url,
      msg: `Cross-site requests cannot sign in or out: Origin ${foreign} is not this service's public origin ${server.url}. If this is your own app, set AUTH_URL to the origin the browser uses, e.g. AUTH_URL=${foreign}.`,
    });
  });

  it('a sign-out form post from another site gets the page too', async () => {
    const client = new Client(server.url, {
      accept: browserAccept,
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    const csrfToken = await client.csrfToken();
    const response = await client.postForm('/api/auth/signout', { csrfToken });
    expect(response.status).toBe(403);
    const html = await response.text();
    expect(html).toContain('<h1 id="page-title">Sign-out refused</h1>');
    expect(noticeOf(html)?.text).toMatch(
      /^This sign-out form was sent from https:\/\/evil\.example,/,
    );
  });

  it('JSON callers keep the JSON error, whose message names the origins and the setting', async () => {
    const callers: Record<string, string>[] = [
      { origin: foreign },
      { origin: foreign, accept: browserAccept, 'x-auth-return-redirect': '1' },
    ];
    for (const headers of callers) {
      const client = new Client(server.url);
      const csrfToken = await client.csrfToken();
      const response = await client.postForm(
        '/api/auth/callback/credentials',
        { csrfToken, email: 'ada@example.com', password },
        headers,
      );
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({
        error: {
          code: 'cross_site',
          message: `Cross-site requests cannot sign in or out: Origin ${foreign} is not this service's public origin ${server.url}. If this is your own app, set AUTH_URL to the origin the browser uses, e.g. AUTH_URL=${foreign}.`,
        },
      });
    }
  });

  it('with only Sec-Fetch-Site to go on, the message says so', async () => {
    const client = new Client(server.url);
    const csrfToken = await client.csrfToken();
    const response = await client.postForm(
      '/api/auth/callback/credentials',
      { csrfToken, email: 'ada@example.com', password },
      { 'sec-fetch-site': 'same-site' },
    );
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toBe(
      `Cross-site requests cannot sign in or out: Sec-Fetch-Site is same-site, not same-origin, for this service's public origin ${server.url}. If this is your own app, set AUTH_URL to the origin the browser uses, e.g. AUTH_URL=https://auth.example.com.`,
    );
  });

  it('Origin: null is explained as a page that withheld its origin', async () => {
    const client = new Client(server.url, { accept: browserAccept, origin: 'null' });
    const csrfToken = await client.csrfToken();
    const form = { csrfToken, email: 'ada@example.com', password };
    const page = await client.postForm('/api/auth/callback/credentials', form);
    expect(page.status).toBe(403);
    const html = await page.text();
    expect(noticeOf(html)?.text).toMatch(/^This sign-in form was sent from another site,/);
    expect(html).toContain("the form's page has <code>Referrer-Policy: no-referrer</code>");
    const json = await new Client(server.url).postForm('/api/auth/callback/credentials', form, {
      origin: 'null',
    });
    const body = (await json.json()) as { error: { message: string } };
    expect(body.error.message).toBe(
      `Cross-site requests cannot sign in or out: Origin null is not this service's public origin ${server.url}. If this is your own app's page, serve it with Referrer-Policy: same-origin (or strict-origin-when-cross-origin) so the browser sends its origin, and set AUTH_URL to that origin.`,
    );
  });

  it('an origin full of markup is printed as text', async () => {
    const client = new Client(server.url, {
      accept: browserAccept,
      origin: 'http://x"><script>alert(1)</script>',
    });
    const csrfToken = await client.csrfToken();
    const response = await client.postForm('/api/auth/callback/credentials', {
      csrfToken,
      email: 'ada@example.com',
      password,
    });
    expect(response.status).toBe(403);
    const html = await response.text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('e.g. <code>AUTH_URL=https://auth.example.com</code>');
  });
});
