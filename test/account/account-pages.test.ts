import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passkeyScript } from '../../src/pages/passkey-script.js';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { aroundSessionChecks } from '../helpers/sessions.js';
import {
  browserAccept,
  hidden,
  noticeOf,
  submitSignInForm,
  unescape,
} from '../pages/page-helpers.js';
import { serviceDatabase, startAccountService, type AccountService } from './account-service.js';

/*
 * Issue 19, item 6: the signed-in account page (`/account`) and its forms, as a browser without
 * script uses them, over real HTTP against the service in process: plain
 * form posts, Post/Redirect/Get, refusals shown on the page. Run in both modes.
 */

const password = 'correct horse battery staple';
const newPassword = 'a brand new and long passphrase';

/** A browser on the service's own origin: Accept for HTML, its Origin, same-origin. */
const browser = (service: AccountService) =>
  new Client(service.url, {
    accept: browserAccept,
    origin: service.url,
    'sec-fetch-site': 'same-origin',
  });

async function signedIn(service: AccountService, email: string, pass = password) {
  const client = browser(service);
  const response = await submitSignInForm(client, { email, password: pass });
  expect(response.status).toBe(302);
  expect(client.sessionCookie()).toBeDefined();
  return client;
}

async function sessionUser(client: Client) {
  const session = (await client.session()) as { user?: { email: string } } | null;
  return session?.user?.email ?? null;
}

/** The account page's HTML for a signed-in browser. */
async function accountPage(client: Client, path = '/account') {
  const response = await client.get(path);
  expect(response.status).toBe(200);
  return response.text();
}

/** Submits a form of the account page as a browser would, with the page's token. */
async function submit(client: Client, action: string, fields: Record<string, string>) {
  const page = await accountPage(client);
  return client.postForm(action, { csrfToken: hidden(page, 'csrfToken'), ...fields });
}

/** An `<input>` by id, as printed. */
function input(html: string, id: string): string {
  const match = new RegExp(`<input id="${id}"[^>]*>`).exec(html);
  if (match === null) throw new Error(`no input #${id}`);
  return match[0];
}

describe('the account page', () => {
  let service: AccountService;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const database = await serviceDatabase('sqlite');
    dispose = database.dispose;
    service = await startAccountService(database.env, {
      THROTTLE_EMAIL_MAX_FAILURES: '3',
      PASSWORD_MIN_LENGTH: '14',
    });
    for (const name of ['ada', 'bob', 'cy', 'dee', 'eve', 'fay']) {
      await service.addUser(`${name}@example.com`, password);
    }
    const named = await service.cli([
      'users',
      'rename',
      '--email',
      'ada@example.com',
      '--name',
      'Ada <Lovelace>',
    ]);
    expect(named.code, named.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await service.stop();
    await dispose();
  });

  it('sends a visitor who is not signed in to the sign-in page, which comes back here', async () => {
    const client = browser(service);
    for (const method of ['GET', 'HEAD']) {
      const response = await client.request('/account', { method });
      expect(response.status).toBe(303);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const location = new URL(response.headers.get('location') ?? '');
      expect(location.origin + location.pathname).toBe(`${service.url}/api/auth/signin`);
      expect(location.searchParams.get('callbackUrl')).toBe('/account');
    }
    // Signing in on that page lands on the account page.
    const signIn = await client.get('/api/auth/signin?callbackUrl=%2Faccount');
    const page = await signIn.text();
    expect(hidden(page, 'callbackUrl')).toBe(`${service.url}/account`);
    const posted = await client.postForm('/api/auth/callback/credentials', {
      csrfToken: hidden(page, 'csrfToken'),
      callbackUrl: hidden(page, 'callbackUrl'),
      email: 'bob@example.com',
      password,
    });
    expect(posted.headers.get('location')).toBe(`${service.url}/account`);
    expect((await client.get('/account')).status).toBe(200);
    // A form post without a session goes the same way, and changes nothing.
    const nobody = browser(service);
    const csrfToken = await nobody.csrfToken();
    const refused = await nobody.postForm('/account/profile', { csrfToken, name: 'Nobody' });
    expect(refused.status).toBe(303);
    expect(refused.headers.get('location')).toMatch(/\/api\/auth\/signin\?callbackUrl=%2Faccount$/);
  });

  it('a session ended elsewhere: the sign-in page says why instead of an empty form', async () => {
    await service.addUser('cyd@example.com', password);
    const client = await signedIn(service, 'cyd@example.com');
    const revoked = await service.cli(['users', 'revoke-sessions', '--email', 'cyd@example.com']);
    expect(revoked.code).toBe(0);
    const response = await client.request('/account');
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location') ?? '');
    expect(location.searchParams.get('error')).toBe('SessionRequired');
    const page = await (await client.request(location.pathname + location.search)).text();
    expect(page).toContain('Your session has ended: you signed out elsewhere');
  });

  it("shows name, email and whether it is verified, with the sign-in page headers and no script but the passkeys' own", async () => {
    const client = await signedIn(service, 'ada@example.com');
    const response = await client.get('/account');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('referrer-policy')).toBe('same-origin');
    const signInPage = await client.get('/api/auth/signin');
    expect(response.headers.get('content-security-policy')).toBe(
      signInPage.headers.get('content-security-policy'),
    );
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    const page = await response.text();
    // Its one script is the passkeys' (adding one needs WebAuthn), allowed by its hash.
    expect(page.split(`<script>${passkeyScript}</script>`)).toHaveLength(2);
    const html = page.replace(`<script>${passkeyScript}</script>`, '');
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('<title>Your account – Gatehouse</title>');
    // Escaped: the name is printed, never interpreted.
    expect(html).toContain('value="Ada &lt;Lovelace&gt;"');
    expect(html).toContain('ada@example.com <span class="hint">(not verified yet)</span>');
    expect(html).toContain('<form method="post" action="/account/profile">');
    expect(html).toContain('<form method="post" action="/account/password/change">');
    expect(html).toContain('At least 14 characters, and not a commonly used password.');
    expect(input(html, 'newPassword')).toContain('minlength="14"');
    // The sign-out form is Auth.js's, with the same token.
    expect(html).toContain('<form method="post" action="/api/auth/signout">');
    expect(hidden(html, 'csrfToken')).toBe(await client.csrfToken());
    expect(noticeOf(html)).toBeUndefined();
  });

  it('/ links a signed-in visitor to the account page', async () => {
    const client = await signedIn(service, 'ada@example.com');
    const html = await (await client.get('/')).text();
    expect(html).toContain('<a class="button" href="/account">Your account</a>');
  });

  it('the profile form changes the name and comes back with a notice (Post/Redirect/Get)', async () => {
    const client = await signedIn(service, 'bob@example.com');
    const posted = await submit(client, '/account/profile', { name: '  Bob Builder ' });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe(`${service.url}/account?done=profile`);
    const html = await accountPage(client, '/account?done=profile');
    expect(noticeOf(html)).toEqual({ role: 'status', text: 'Your name was changed.' });
    expect(input(html, 'name')).toContain('value="Bob Builder"');
    expect(await client.session()).toMatchObject({ user: { name: 'Bob Builder' } });
    // A `done` the page does not know prints nothing.
    expect(noticeOf(await accountPage(client, '/account?done=%3Cb%3E'))).toBeUndefined();
  });

  it('a refused name comes back 422 with the field marked and the typed value kept', async () => {
    const client = await signedIn(service, 'bob@example.com');
    const typed = 'x'.repeat(201);
    const response = await submit(client, '/account/profile', { name: typed });
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('<title>Error: Your account – Gatehouse</title>');
    expect(noticeOf(html)).toEqual({ role: 'alert', text: 'Enter a name of 1 to 200 characters.' });
    expect(input(html, 'name')).toContain(`value="${typed}"`);
    expect(input(html, 'name')).toContain('aria-invalid="true"');
    expect(input(html, 'name')).toContain('aria-describedby="notice"');
    // The form is ready to send again, and the address left in the bar leads back to the page.
    expect(hidden(html, 'csrfToken')).toBe(await client.csrfToken());
    const again = await client.get('/account/profile');
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(`${service.url}/account`);
  });

  it('a wrong current password is refused 403 on the page; nothing typed comes back', async () => {
    const client = await signedIn(service, 'cyd@example.com');
    const response = await submit(client, '/account/password/change', {
      currentPassword: 'not the password at all',
      newPassword,
      newPasswordRepeat: newPassword,
    });
    expect(response.status).toBe(403);
    const html = await response.text();
    expect(noticeOf(html)).toEqual({
      role: 'alert',
      text: 'Your current password is not correct, so your password was not changed.',
    });
    expect(input(html, 'currentPassword')).toContain('aria-invalid="true"');
    expect(input(html, 'newPassword')).not.toContain('aria-invalid');
    expect(html).not.toContain(newPassword);
    expect(html).not.toContain('not the password at all');
    expect(await sessionUser(client)).toBe('cyd@example.com');
  });

  it('a weak new password is refused 422 with the rule; a differing repeat before any check', async () => {
    const client = await signedIn(service, 'cyd@example.com');
    const short = await submit(client, '/account/password/change', {
      currentPassword: password,
      newPassword: 'too short',
      newPasswordRepeat: 'too short',
    });
    expect(short.status).toBe(422);
    const html = await short.text();
    expect(unescape(noticeOf(html)?.text ?? '')).toBe(
      'The password must be at least 14 characters. Your password was not changed.',
    );
    expect(input(html, 'newPassword')).toContain(
      'aria-describedby="newPassword-rules notice" aria-invalid="true" autofocus',
    );
    // The refusal is told inside the form it is about; the page's top only points to it.
    expect(html).toMatch(
      /<form method="post" action="\/account\/password\/change">\n<input type="hidden" name="csrfToken" value="[^"]*">\n<div id="notice" class="notice notice-error" role="alert">/,
    );
    expect(html).toContain(
      '<p class="notice notice-error">Nothing was changed: <a href="#notice">see why, beside the form</a>.</p>',
    );
    const common = await submit(client, '/account/password/change', {
      currentPassword: password,
      newPassword: 'password12345678',
      newPasswordRepeat: 'password12345678',
    });
    expect(common.status).toBe(422);
    expect(noticeOf(await common.text())?.text).toMatch(/commonly used passwords/);
    // A differing repeat: refused by the page, so even a wrong current password is not counted.
    const differ = await submit(client, '/account/password/change', {
      currentPassword: 'wrong, but never checked',
      newPassword,
      newPasswordRepeat: `${newPassword}!`,
    });
    expect(differ.status).toBe(422);
    const differHtml = await differ.text();
    expect(noticeOf(differHtml)?.text).toMatch(/^The new password and its repetition differ/);
    expect(input(differHtml, 'newPasswordRepeat')).toContain('aria-invalid="true"');
    expect(input(differHtml, 'currentPassword')).not.toContain('aria-invalid');
  });

  it('a password change ends the other sessions and keeps this one, and says so', async () => {
    const here = await signedIn(service, 'dee@example.com');
    const elsewhere = await signedIn(service, 'dee@example.com');
    const posted = await submit(here, '/account/password/change', {
      currentPassword: password,
      newPassword,
      newPasswordRepeat: newPassword,
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe(`${service.url}/account?done=password`);
    // This browser got its session's new cookie with the redirect.
    expect(
      posted.headers.getSetCookie().some((line) => line.startsWith('authjs.session-token=')),
    ).toBe(true);
    const html = await accountPage(here, '/account?done=password');
    expect(noticeOf(html)).toEqual({
      role: 'status',
      text: 'Password changed; your other sessions were signed out.',
    });
    expect(await sessionUser(here)).toBe('dee@example.com');
    expect(await elsewhere.session()).toBeNull();
    expect((await elsewhere.get('/account')).status).toBe(303);
    // The new password signs in; the old one does not.
    await signedIn(service, 'dee@example.com', newPassword);
  });

  it('throttled wrong passwords: 429 with Retry-After, and the page says when to try again', async () => {
    const client = await signedIn(service, 'eve@example.com');
    const attempt = () =>
      submit(client, '/account/password/change', {
        currentPassword: 'a wrong password',
        newPassword,
        newPasswordRepeat: newPassword,
      });
    for (let i = 0; i < 3; i += 1) expect((await attempt()).status).toBe(403);
    const throttled = await attempt();
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/u);
    expect(noticeOf(await throttled.text())).toEqual({
      role: 'alert',
      text: 'Too many wrong passwords. Password checks for your account are paused for now to keep it safe, and your password was not checked this time. Please try again in 15 minutes.',
    });
  });

  it('a form without its CSRF token, or with a stale one, is refused 403 and nothing changes', async () => {
    const client = await signedIn(service, 'fay@example.com');
    const before = await accountPage(client);
    const sent: Record<string, string>[] = [
      { name: 'Mallory' },
      { name: 'Mallory', csrfToken: 'stale' },
    ];
    for (const fields of sent) {
      const response = await client.postForm('/account/profile', fields);
      expect(response.status).toBe(403);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await response.text();
      expect(noticeOf(html)).toEqual({
        role: 'alert',
        text: 'This form expired before it was sent, so nothing changed. Please try again. If this keeps happening, allow cookies for this site.',
      });
      // Ready to send again with a good token.
      expect(hidden(html, 'csrfToken')).toBe(hidden(before, 'csrfToken'));
    }
    expect(await client.session()).not.toMatchObject({ user: { name: 'Mallory' } });
  });

  it('a form from another site is refused 403 with a page that says why', async () => {
    const client = await signedIn(service, 'fay@example.com');
    const csrfToken = hidden(await accountPage(client), 'csrfToken');
    const cases = [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example', 'sec-fetch-site': 'same-site' },
      { origin: service.url, 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of cases) {
      const response = await client.postForm(
        '/account/password/change',
        { csrfToken, currentPassword: password, newPassword, newPasswordRepeat: newPassword },
        headers,
      );
      expect(response.status).toBe(403);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const html = await response.text();
      expect(html).toContain('<h1 id="page-title">Change refused</h1>');
      expect(unescape(noticeOf(html)?.text ?? '')).toMatch(
        /^This account form was sent from .+, but this service is at http:\/\/127\.0\.0\.1:\d+\. To keep accounts safe, forms from another site are refused, so nothing happened\.$/,
      );
      expect(html).toContain('<a class="button" href="/account">Go to your account</a>');
    }
    // Nothing changed: the old password still signs in.
    await signedIn(service, 'fay@example.com');
  });

  it('takes only plain form posts; other methods are 405', async () => {
    const client = await signedIn(service, 'fay@example.com');
    const json = await client.request('/account/profile', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"x"}',
    });
    expect(json.status).toBe(415);
    expect((await client.request('/account', { method: 'POST' })).status).toBe(405);
    expect((await client.request('/account/profile', { method: 'PUT' })).status).toBe(405);
  });
});

describe('the account page when the session store does not answer', () => {
  let server: TestServer;
  let failing = false;
  beforeAll(async () => {
    server = await startServer({
      wrap: (deps) => ({
        ...deps,
        sessions: aroundSessionChecks(deps.sessions, () => {
          if (failing) throw new Error('injected: no database');
        }),
      }),
    });
    await addUser(server, 'ada@example.com', password, 'Ada');
  });
  afterAll(() => server.close());

  it('says the service is busy, as a page, with 503 and Retry-After', async () => {
    const client = new Client(server.url, { accept: browserAccept, origin: server.url });
    expect((await submitSignInForm(client, { email: 'ada@example.com', password })).status).toBe(
      302,
    );
    const csrfToken = hidden(await (await client.get('/account')).text(), 'csrfToken');
    failing = true;
    try {
      for (const response of [
        await client.get('/account'),
        await client.postForm('/account/profile', { csrfToken, name: 'Ada' }),
      ]) {
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('5');
        expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(noticeOf(await response.text())?.text).toMatch(/^The service is busy right now/);
      }
    } finally {
      failing = false;
    }
    expect((await client.get('/account')).status).toBe(200);
  });
});

describe('account changes while another process holds the SQLite write lock', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password, 'Ada');
  });
  afterAll(() => server.close());

  it('the form and the JSON route answer 503 with Retry-After once the lock wait is over, never a 500', async () => {
    const client = new Client(server.url, { accept: browserAccept, origin: server.url });
    expect((await submitSignInForm(client, { email: 'ada@example.com', password })).status).toBe(
      302,
    );
    const pageToken = hidden(await (await client.get('/account')).text(), 'csrfToken');
    const jsonToken = await client.csrfToken();
    const other = new DatabaseSync(path.join(server.dir, 'test.db'));
    other.exec('begin immediate');
    try {
      const [form, json] = await Promise.all([
        client.postForm('/account/profile', { csrfToken: pageToken, name: 'Ada L' }),
        client.request('/api/account/profile', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ csrfToken: jsonToken, name: 'Ada L' }),
        }),
      ]);
      expect(form.status).toBe(503);
      expect(form.headers.get('retry-after')).toBe('5');
      expect(noticeOf(await form.text())?.text).toMatch(/^The service is busy right now/);
      expect(json.status).toBe(503);
      expect(json.headers.get('retry-after')).toBe('5');
      expect(((await json.json()) as { error: { code: string } }).error.code).toBe('unavailable');
    } finally {
      other.exec('rollback');
      other.close();
    }
    // The lock gone, the same change goes through.
    const again = await client.postForm('/account/profile', {
      csrfToken: hidden(await (await client.get('/account')).text(), 'csrfToken'),
      name: 'Ada L',
    });
    expect(again.status).toBe(303);
  });
});
