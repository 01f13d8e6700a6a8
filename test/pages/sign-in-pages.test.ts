import { createHash } from 'node:crypto';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { contrastRatio, paletteFor } from '../../src/pages/colour.js';
import { formatWait } from '../../src/pages/notices.js';
import { passkeyScript, passkeyScriptCspSource } from '../../src/pages/passkey-script.js';
import { WorkGate } from '../../src/traffic/work-gate.js';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import {
  browser,
  browserAccept,
  follow,
  hidden,
  noticeOf,
  submitSignInForm,
} from './page-helpers.js';

const password = 'correct horse battery staple';
const wrong = 'not the password at all';

/** The one script the sign-in page runs (passkeys, where the browser has them). */
const ownScript = `<script>${passkeyScript}</script>`;
describe('the sign-in page', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password);
  });
  afterAll(() => server.close());

  it('is a plain form with Auth.js field names, labelled fields and a valid CSRF pair', async () => {
    const client = browser(server);
    const response = await client.get('/api/auth/signin');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    // So that the browser's form post carries this origin, not `Origin: null`.
    expect(response.headers.get('referrer-policy')).toBe('same-origin');
    const html = await response.text();
    expect(html).toContain(
      '<form method="post" action="/api/auth/callback/credentials" data-signin>',
    );
    expect(html).toContain('<label for="email">Email</label>');
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toMatch(/<input id="email" name="email" type="email" autocomplete="username"/);
    expect(html).toMatch(/name="password" type="password" autocomplete="current-password"/);
    expect(html).toContain('<button type="submit">Sign in</button>');
    // The product's name once: the heading already says it.
    expect(html).toContain('<title>Sign in to Gatehouse</title>');
    expect(noticeOf(html)).toBeUndefined();
    // The page's token pairs with the cookie it set: Auth.js keeps that cookie and hands out
    // the same token on its own CSRF route.
    expect(client.cookies.has('authjs.csrf-token')).toBe(true);
    expect(await client.csrfToken()).toBe(hidden(html, 'csrfToken'));
    expect(hidden(html, 'callbackUrl')).toBe(server.url);
  });

  it('a form post without script signs in: 302 to the callbackUrl and a session cookie', async () => {
    const client = browser(server);
    const response = await submitSignInForm(
      client,
      { email: 'ada@example.com', password },
      `/api/auth/signin?callbackUrl=${encodeURIComponent(`${server.url}/dashboard`)}`,
    );
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`${server.url}/dashboard`);
    expect(client.sessionCookie()).toBeDefined();
    expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
  });

  it('a wrong password and an unknown email get one message, which never says which', async () => {
    const pages = [];
    for (const fields of [
      { email: 'ada@example.com', password: wrong },
      { email: 'nobody@example.com', password },
    ]) {
      const client = browser(server);
      const response = await submitSignInForm(client, fields);
      expect(response.headers.get('location')).toBe(
        `${server.url}/api/auth/signin?error=CredentialsSignin&code=credentials`,
      );
      pages.push(await follow(client, response));
    }
    const [first, second] = pages as [string, string];
    expect(noticeOf(first)).toEqual({
      role: 'alert',
      text: 'Wrong email or password. Check both and try again.',
    });
    // Each page keeps the email typed, and nothing else differs (but the CSRF token).
    expect(first).toContain('value="ada@example.com"');
    expect(second).toContain('value="nobody@example.com"');
    const masked = (html: string) =>
      html.replace(/value="[0-9a-f]{64}"/, '').replace(/value="[a-z]+@example\.com"/, '');
    expect(masked(second)).toBe(masked(first));
    // The message describes both fields, which are marked invalid; the title says "Error".
    expect(first).toMatch(/id="email"[^>]* aria-describedby="notice" aria-invalid="true">/);
    expect(first).toMatch(/id="password"[^>]* aria-describedby="notice" aria-invalid="true">/);
    expect(first).toContain('<title>Error: Sign in to Gatehouse</title>');
  });

  it('a form that outlived its CSRF token says the form expired', async () => {
    const client = browser(server);
    await client.get('/api/auth/signin');
    const response = await client.postForm('/api/auth/callback/credentials', {
      csrfToken: 'f'.repeat(64),
      email: 'ada@example.com',
      password,
    });
    expect(response.headers.get('location')).toBe(
      `${server.url}/api/auth/signin?error=MissingCSRF`,
    );
    expect(noticeOf(await follow(client, response))?.text).toMatch(
      /^This form expired before it was sent, so nothing happened\./,
    );
    expect(client.sessionCookie()).toBeUndefined();
  });

  it.each([
    [
      '?error=SessionRequired',
      'status',
      'Your session has ended: you signed out elsewhere, your password or address changed, or it expired. Please sign in again to continue.',
    ],
    ['?signedOut=1', 'status', 'You have signed out.'],
    ['?error=Configuration', 'alert', 'Something went wrong while signing in. Please try again.'],
    [
      '?error=Nonsense&code=whatever',
      'alert',
      'Something went wrong while signing in. Please try again.',
    ],
    ['?error=CredentialsSignin', 'alert', 'Wrong email or password. Check both and try again.'],
  ])('%s shows a fixed message', async (query, role, text) => {
    const html = await (await browser(server).get(`/api/auth/signin${query}`)).text();
    expect(noticeOf(html)).toEqual({ role, text });
  });

  it('reflects nothing from the query string', async () => {
    const attack = '"><script>alert(1)</script><img src=x onerror=alert(2)>';
    const query = new URLSearchParams({
      error: attack,
      code: attack,
      retryAfter: attack,
      signedOut: attack,
      callbackUrl: `/${attack}`,
    });
    const response = await browser(server).get(`/api/auth/signin?${query}`);
    expect(response.status).toBe(200);
    // The page's own passkey script aside, nothing that runs.
    const html = (await response.text()).replace(ownScript, '');
    expect(html).not.toMatch(/<script|<img|javascript:/i);
    // The callback URL Auth.js accepted stays on this origin, printed as the URL it is.
    expect(hidden(html, 'callbackUrl')).toBe(new URL(`/${attack}`, server.url).href);
    expect(html.match(/onerror/g)).toHaveLength(1);
    expect(html).toContain(`value="${server.url}/%22%3E%3Cscript%3Ealert(1)%3C/script%3E%3Cimg`);
    expect(noticeOf(html)?.text).toBe('Something went wrong while signing in. Please try again.');
  });

  it('runs only its passkey script, allowed by its hash: a CSP without unsafe-inline, the one stylesheet allowed by its hash', async () => {
    const response = await browser(server).get('/api/auth/signin');
    const csp = response.headers.get('content-security-policy') ?? '';
    const page = await response.text();
    expect(page.split(ownScript)).toHaveLength(2);
    const html = page.replace(ownScript, '');
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain(`script-src ${passkeyScriptCspSource}; connect-src 'self'`);
    expect(csp.split('; ')).toEqual(
      expect.arrayContaining([
        "default-src 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
      ]),
    );
    const styles = [...html.matchAll(/<style>([^<]*)<\/style>/g)].map((m) => m[1] as string);
    expect(styles).toHaveLength(1);
    const digest = createHash('sha256')
      .update(styles[0] as string)
      .digest('base64');
    expect(csp).toContain(`style-src 'sha256-${digest}';`);
  });

  it('HEAD answers like GET without a body', async () => {
    const response = await fetch(`${server.url}/api/auth/signin`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toBe('');
  });
});

describe('a throttled sign-in', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ throttle: { emailMaxFailures: 2 } });
    await addUser(server, 'ada@example.com', password);
    const client = new Client(server.url);
    await client.signIn('ada@example.com', wrong);
    await client.signIn('ada@example.com', wrong);
  });
  afterAll(() => server.close());

  it('Auth.js clients still get exactly {url} with 429 and Retry-After', async () => {
    const response = await new Client(server.url).signIn('ada@example.com', password);
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(890);
    expect(await response.json()).toEqual({
      url: `${server.url}/api/auth/signin?error=CredentialsSignin&code=rate_limited`,
    });
  });

  it('a browser is told, with the right password, that it was not checked and when to retry', async () => {
    const client = browser(server);
    const response = await submitSignInForm(client, { email: 'ada@example.com', password });
    expect(response.status).toBe(302);
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(890);
    expect(response.headers.get('location')).toBe(
      `${server.url}/api/auth/signin?error=CredentialsSignin&code=rate_limited&retryAfter=${retryAfter}`,
    );
    const notice = noticeOf(await follow(client, response));
    expect(notice).toEqual({
      role: 'alert',
      text: 'Too many sign-in attempts. Sign-in is paused for now to keep accounts safe, and your password was not checked this time. Please try again in 15 minutes.',
    });
    expect(client.sessionCookie()).toBeUndefined();
  });

  it('without a usable wait the page still says what happened', async () => {
    for (const retryAfter of ['', '0', '86401', '1e3', '-5']) {
      const html = await (
        await browser(server).get(
          `/api/auth/signin?error=CredentialsSignin&code=rate_limited&retryAfter=${retryAfter}`,
        )
      ).text();
      expect(noticeOf(html)?.text).toMatch(/was not checked this time\. Please try again later\.$/);
    }
  });

  it.each([
    [1, 'less than a minute'],
    [59, 'less than a minute'],
    [60, '1 minute'],
    [61, '2 minutes'],
    [900, '15 minutes'],
    [3600, '1 hour'],
    [3661, '1 hour and 2 minutes'],
    [86_400, '24 hours'],
  ])('a wait of %i s reads "%s"', (seconds, text) => {
    expect(formatWait(seconds)).toBe(text);
  });
});

describe('a sign-in the service cannot take now', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a browser form post sees the busy page with 503 and Retry-After; API callers keep JSON', async () => {
    // One sign-in inside Auth.js at a time and none waiting: while the test holds its hash,
    // the next sign-in is shed at the door.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const gate = new WorkGate(1, 0);
    server = await startServer({
      wrap: (deps) => ({
        ...deps,
        hasher: {
          ...deps.hasher,
          limits: { concurrency: 1, queueMax: 0 },
          verify: (hash, pw) =>
            gate.run(async () => {
              await held;
              return deps.hasher.verify(hash, pw);
            }),
        },
      }),
    });
    await addUser(server, 'ada@example.com', password);
    const inFlight = new Client(server.url).signIn('ada@example.com', password);
    await expect.poll(() => gate.active, { timeout: 20_000, interval: 5 }).toBe(1);

    const client = browser(server);
    const callbackUrl = `${server.url}/dashboard`;
    const page = await (
      await client.get(`/api/auth/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`)
    ).text();
    const fields = {
      csrfToken: hidden(page, 'csrfToken'),
      callbackUrl: hidden(page, 'callbackUrl'),
      email: 'ada@example.com',
      password,
    };
    const busy = await client.postForm('/api/auth/callback/credentials', fields);
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(busy.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    const html = await busy.text();
    expect(noticeOf(html)).toEqual({
      role: 'alert',
      text: 'The service is busy right now and could not check your details. Please try again in a few seconds.',
    });
    // The form is ready to send again, to the same place, with a token that still pairs, and
    // the email typed.
    expect(html).toContain('value="ada@example.com"');
    expect(hidden(html, 'csrfToken')).toBe(fields.csrfToken);
    expect(hidden(html, 'callbackUrl')).toBe(callbackUrl);

    // Auth.js clients and JSON callers get exactly the JSON answer, whatever they accept.
    const apiHeaders: Record<string, string>[] = [
      { 'x-auth-return-redirect': '1' },
      { 'x-auth-return-redirect': '1', accept: browserAccept },
      { accept: 'application/json' },
    ];
    for (const headers of apiHeaders) {
      const api = await new Client(server.url).postForm(
        '/api/auth/callback/credentials',
        fields,
        headers,
      );
      expect(api.status).toBe(503);
      expect(api.headers.get('retry-after')).toBe('1');
      expect(await api.json()).toEqual({
        error: { code: 'overloaded', message: 'The service is busy; retry shortly.' },
      });
    }

    release();
    expect((await inFlight).status).toBe(200);
    // Once the service has room, the same form signs in.
    const retried = await client.postForm('/api/auth/callback/credentials', fields);
    expect(retried.status).toBe(302);
    expect(retried.headers.get('location')).toBe(callbackUrl);
  });

  it('with the database unreachable, a browser form post sees the busy page with Retry-After: 5', async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password);
    const client = browser(server);
    const page = await (await client.get('/api/auth/signin')).text();
    const other = new DatabaseSync(path.join(server.dir, 'test.db'));
    other.exec('begin exclusive');
    try {
      const response = await client.postForm('/api/auth/signin/credentials', {
        csrfToken: hidden(page, 'csrfToken'),
        email: 'ada@example.com',
        password,
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(noticeOf(await response.text())?.text).toMatch(/^The service is busy right now/);
    } finally {
      other.exec('rollback');
      other.close();
    }
  });
});

describe('the sign-out page', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password);
  });
  afterAll(() => server.close());

  async function signedIn(): Promise<Client> {
    const client = browser(server);
    await client.signIn('ada@example.com', password);
    expect(client.sessionCookie()).toBeDefined();
    return client;
  }

  it('asks first; its button signs out and the sign-in page says so', async () => {
    const client = await signedIn();
    const response = await client.get('/api/auth/signout');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    const html = await response.text();
    expect(html).toContain('<h1 id="page-title">Sign out of Gatehouse?</h1>');
    expect(html).toContain('<form method="post" action="/api/auth/signout">');
    expect(html).not.toMatch(/<script/i);
    // A way back without signing out, even without APP_URL: the person's account page.
    expect(html).toContain('<a class="button secondary" href="/account">Stay signed in</a>');
    // Showing the page signs nobody out.
    expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });

    const signedOutUrl = `${server.url}/api/auth/signin?signedOut=1`;
    expect(hidden(html, 'callbackUrl')).toBe(signedOutUrl);
    const posted = await client.postForm('/api/auth/signout', {
      csrfToken: hidden(html, 'csrfToken'),
      callbackUrl: hidden(html, 'callbackUrl'),
    });
    expect(posted.status).toBe(302);
    expect(posted.headers.get('location')).toBe(signedOutUrl);
    expect(client.sessionCookie()).toBeUndefined();
    expect(await client.session()).toBeNull();

    const signIn = await follow(client, posted);
    expect(noticeOf(signIn)).toEqual({ role: 'status', text: 'You have signed out.' });
    // Signing in again from there does not come back to the "signed out" page.
    expect(hidden(signIn, 'callbackUrl')).toBe(server.url);
  });

  it('a callbackUrl given to the page is where sign-out ends', async () => {
    const client = await signedIn();
    const html = await (await client.get('/api/auth/signout?callbackUrl=%2Fgoodbye')).text();
    expect(hidden(html, 'callbackUrl')).toBe(`${server.url}/goodbye`);
    const posted = await client.postForm('/api/auth/signout', {
      csrfToken: hidden(html, 'csrfToken'),
      callbackUrl: hidden(html, 'callbackUrl'),
    });
    expect(posted.headers.get('location')).toBe(`${server.url}/goodbye`);
    expect(await client.session()).toBeNull();
  });
});

describe('branding from configuration', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('product name, accent colour and logo appear, escaped, and the CSP allows the logo', async () => {
    server = await startServer({
      config: {
        page: {
          productName: 'Acme <Portal> & "Co"',
          accentColor: '#FC0',
          logoUrl: 'https://cdn.example.com/brand/logo.svg?v=2&x=1',
          signedInUrl: undefined,
        },
      },
    });
    const response = await browser(server).get('/api/auth/signin');
    const html = await response.text();
    expect(html).toContain('<title>Sign in to Acme &lt;Portal&gt; &amp; &quot;Co&quot;</title>');
    expect(html).toContain(
      '<h1 id="page-title">Sign in to Acme &lt;Portal&gt; &amp; &quot;Co&quot;</h1>',
    );
    expect(html).toContain(
      '<img class="logo" src="https://cdn.example.com/brand/logo.svg?v=2&amp;x=1" alt="">',
    );
    // A light accent gets black text on the button.
    expect(html).toContain('--accent:#ffcc00;--on-accent:#000000;--focus:#1f2328');
    expect(response.headers.get('content-security-policy')).toContain(
      'img-src https://cdn.example.com;',
    );
  });

  it('a logo on this origin is allowed as self', async () => {
    server = await startServer({
      config: {
        page: {
          productName: 'Gatehouse',
          accentColor: '#0b5',
          logoUrl: '/brand.png',
          signedInUrl: undefined,
        },
      },
    });
    const response = await browser(server).get('/api/auth/signout');
    expect(await response.text()).toContain('<img class="logo" src="/brand.png" alt="">');
    expect(response.headers.get('content-security-policy')).toContain("img-src 'self';");
  });

  it.each(['#000000', '#ffffff', '#777777', '#808080', '#2563eb', '#ffcc00', '#0b5', '#e11d48'])(
    'the button text on %s has at least 4.5:1 contrast',
    (accent) => {
      const palette = paletteFor(accent);
      expect(contrastRatio(palette.accent, palette.onAccent)).toBeGreaterThanOrEqual(4.5);
      expect(contrastRatio(palette.focus, '#ffffff')).toBeGreaterThanOrEqual(3);
    },
  );
});

describe('page configuration', () => {
  it('defaults to Gatehouse, a blue accent, no logo and the account pages at /account', () => {
    const result = parseConfig({});
    expect(result.ok && result.config.page).toEqual({
      productName: 'Gatehouse',
      accentColor: '#2563eb',
      logoUrl: undefined,
      accountPagesPath: '/account',
    });
  });

  it('an empty PAGE_LOGO_URL means no logo', () => {
    const result = parseConfig({ PAGE_LOGO_URL: '' });
    expect(result.ok && result.config.page.logoUrl).toBeUndefined();
  });

  it.each([
    [{ PAGE_ACCENT_COLOR: 'blue' }, 'PAGE_ACCENT_COLOR: must be a hex colour'],
    [{ PAGE_ACCENT_COLOR: '#12345' }, 'PAGE_ACCENT_COLOR: must be a hex colour'],
    [{ PAGE_ACCENT_COLOR: '#fff;background:url(x)' }, 'PAGE_ACCENT_COLOR: must be a hex colour'],
    [{ PAGE_LOGO_URL: 'http://cdn.example.com/logo.svg' }, 'PAGE_LOGO_URL: must be an https://'],
    [{ PAGE_LOGO_URL: '//cdn.example.com/logo.svg' }, 'PAGE_LOGO_URL: must be an https://'],
    [{ PAGE_LOGO_URL: 'javascript:alert(1)' }, 'PAGE_LOGO_URL: must be an https://'],
    [{ PAGE_LOGO_URL: 'logo.svg' }, 'PAGE_LOGO_URL: must be an https://'],
    [{ PAGE_LOGO_URL: 'https://u:p@cdn.example.com/x' }, 'PAGE_LOGO_URL: must be an https://'],
    [{ PAGE_PRODUCT_NAME: '' }, 'PAGE_PRODUCT_NAME: must be 1 to 60 characters'],
    [{ PAGE_PRODUCT_NAME: '   ' }, 'PAGE_PRODUCT_NAME: must be 1 to 60 characters'],
    [{ PAGE_PRODUCT_NAME: 'a'.repeat(61) }, 'PAGE_PRODUCT_NAME: must be 1 to 60 characters'],
    [{ PAGE_PRODUCT_NAME: 'Two\nlines' }, 'PAGE_PRODUCT_NAME: must be 1 to 60 characters'],
  ])('%j stops start-up naming the variable', (env, message) => {
    const result = parseConfig(env);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.some((p) => p.startsWith(message))).toBe(true);
  });

  it.each([
    [{ PAGE_LOGO_URL: 'https://cdn.example.com/logo.svg' }],
    [{ PAGE_LOGO_URL: '/static/logo.png' }],
    [{ PAGE_ACCENT_COLOR: '#0B5' }],
    [{ PAGE_PRODUCT_NAME: 'Ünïcode Portal' }],
  ])('%j is accepted', (env) => {
    expect(parseConfig(env).ok).toBe(true);
  });
});
