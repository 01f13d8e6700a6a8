import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedMail } from '../helpers/captured-mail.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { browser, follow, hidden, noticeOf, unescape } from './page-helpers.js';

/*
 * The pages of a sign-in by e-mail as a browser gets them, no script (issue 40 item 1): the
 * sign-in page's "Email me a sign-in link" (a second button of its form), "check your inbox"
 * with the code form and the address this browser asked for, the mailed link's page (its GET
 * uses nothing; one button), and the sign-in page after a wrong code. The app in process, mail
 * captured from the outbox.
 */

const password = 'correct horse battery staple';
const button =
  '<button type="submit" form="signin-form" formaction="/api/auth/signin/email" formnovalidate class="secondary">Email me a sign-in link</button>';

describe('the pages of a sign-in by e-mail', () => {
  let server: TestServer;
  const mail = capturedMail();
  /** The newest sign-in mail's link (path and query) and code, once its work has run. */
  async function mailed(to: string) {
    await expect
      .poll(() => mail.to(to, 'email-signin').length, { timeout: 20_000, interval: 25 })
      .toBeGreaterThan(0);
    const values = mail.to(to, 'email-signin').at(-1)?.values;
    if (values === undefined) throw new Error(`no sign-in mail to ${to}`);
    mail.mails.length = 0;
    const link = new URL(values.link ?? '');
    return { path: `${link.pathname}${link.search}`, code: values.code ?? '' };
  }

  beforeAll(async () => {
    server = await startServer({
      config: { emailSignIn: true },
      wrap: (deps) => ({ ...deps, mail: mail.queue }),
    });
    await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
  });
  afterAll(() => server.close());

  /** The sign-in page's form, posted with the mail's button: its email, no password. */
  async function askOnPage(client: ReturnType<typeof browser>, email: string) {
    const page = await (await client.get('/api/auth/signin')).text();
    return client.postForm('/api/auth/signin/email', {
      csrfToken: hidden(page, 'csrfToken'),
      callbackUrl: hidden(page, 'callbackUrl'),
      email,
      password: '',
    });
  }

  it('the sign-in page has the button when EMAIL_SIGNIN=on, on the form it belongs to, and not when off', async () => {
    const html = await (await browser(server).get('/api/auth/signin')).text();
    expect(html).toContain(
      '<form method="post" action="/api/auth/callback/credentials" data-signin id="signin-form">',
    );
    expect(html).toContain(button);
    const off = await startServer();
    try {
      expect(await (await browser(off).get('/api/auth/signin')).text()).not.toContain(
        'Email me a sign-in link',
      );
      expect((await browser(off).get('/api/auth/verify-request')).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('the button leads to "check your inbox": the address this browser asked for, and the code form that signs it in', async () => {
    const client = browser(server);
    const asked = await askOnPage(client, 'ada@example.com');
    expect(asked.status).toBe(302);
    expect(asked.headers.get('location')).toBe(
      `${server.url}/api/auth/verify-request?provider=email&type=email`,
    );
    const inbox = await follow(client, asked);
    expect(inbox).toContain('<h1 id="page-title">Check your inbox</h1>');
    expect(inbox).toContain('If <strong>ada@example.com</strong> can sign in here');
    expect(inbox).toContain('<input type="hidden" name="email" value="ada@example.com">');
    expect(inbox).toContain('<form method="post" action="/api/auth/callback/email">');
    const { code } = await mailed('ada@example.com');
    const signedIn = await client.postForm('/api/auth/callback/email', {
      csrfToken: hidden(inbox, 'csrfToken'),
      email: hidden(inbox, 'email'),
      code,
    });
    expect(signedIn.status).toBe(302);
    expect(signedIn.headers.get('location')).toBe(server.url);
    // The address kept for the code's form (sealed, ./asked-address.ts) goes with the sign-in.
    expect(asked.headers.getSetCookie()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^gatehouse\.email-signin=[\w-]{379}; Path=\/api\/auth; Max-Age=3600; HttpOnly; SameSite=Lax$/,
        ),
      ]),
    );
    expect(asked.headers.getSetCookie().join('\n')).not.toContain('ada');
    expect(signedIn.headers.getSetCookie()).toContain(
      'gatehouse.email-signin=; Path=/api/auth; Max-Age=0; HttpOnly; SameSite=Lax',
    );
    const session = (await (await client.get('/api/auth/session')).json()) as {
      user: { email: string };
    };
    expect(session.user.email).toBe('ada@example.com');
  });

  it('a wrong code: the sign-in page says so and offers the code form again, the field marked', async () => {
    const client = browser(server);
    const inbox = await follow(client, await askOnPage(client, 'ada@example.com'));
    await mailed('ada@example.com');
    const refused = await client.postForm('/api/auth/callback/email', {
      csrfToken: hidden(inbox, 'csrfToken'),
      email: 'ada@example.com',
      code: 'ZZZZZZZZ',
    });
    expect(refused.headers.get('location')).toBe(
      `${server.url}/api/auth/signin?error=CredentialsSignin&code=email_code_invalid`,
    );
    const page = await follow(client, refused);
    expect(noticeOf(page)).toEqual({
      role: 'alert',
      text: 'That code is not right, or it expired or was used. Type the code from the newest mail, in the browser where you asked for it, or open its link.',
    });
    expect(page).toContain('<input type="hidden" name="email" value="ada@example.com">');
    expect(page).toMatch(/<input id="mailCode" name="code"[^>]* aria-invalid="true">/);
    expect(page).toContain(button);
    // Only the code's field is marked: the password form was not what was wrong.
    expect(page).not.toMatch(/<input id="(email|password)"[^>]* aria-invalid/);
  });

  it('the mailed link: its GET shows one button and uses nothing; pressed, it signs in; spent, the page says so', async () => {
    const client = browser(server);
    await askOnPage(client, 'ada@example.com');
    const { path } = await mailed('ada@example.com');
    const reader = browser(server);
    for (let i = 0; i < 3; i += 1) {
      const page = await reader.get(path);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      // Its form posts to a sign-in path: a browser must send this origin, not `Origin: null`.
      expect(page.headers.get('referrer-policy')).toBe('same-origin');
      expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
      const html = await page.text();
      expect(html).toContain('Press the button to sign in as <strong>ada@example.com</strong>.');
      expect(html).toContain('<button type="submit">Sign in</button>');
      expect(unescape(hidden(html, 'callbackUrl'))).toBe(server.url);
    }
    const html = await (await reader.get(path)).text();
    const pressed = await reader.postForm('/api/auth/callback/email', {
      csrfToken: hidden(html, 'csrfToken'),
      token: hidden(html, 'token'),
      callbackUrl: hidden(html, 'callbackUrl'),
    });
    expect(pressed.status).toBe(302);
    expect(pressed.headers.get('location')).toBe(server.url);
    const spent = await (await reader.get(path)).text();
    expect(spent).toContain('<h1 id="page-title">Sign-in link not valid</h1>');
    expect(spent).not.toContain('name="token"');
    expect(spent).toContain('<a class="button" href="/api/auth/signin">Ask for a new link</a>');
  });

  it('an address that is none, and too many mails, are worded on the sign-in page', async () => {
    const client = browser(server);
    const none = await askOnPage(client, '');
    expect(none.headers.get('location')).toBe(
      `${server.url}/api/auth/signin?error=EmailSignInError&code=email_invalid`,
    );
    expect(noticeOf(await follow(client, none))?.text).toBe(
      'Type your email address, then press “Email me a sign-in link”.',
    );
    const limited = await client.get(
      '/api/auth/signin?error=EmailSignInError&code=rate_limited&retryAfter=600',
    );
    expect(noticeOf(await limited.text())?.text).toBe(
      'Too many sign-in mails were asked for from here. Nothing was sent; try again in 10 minutes, or sign in with your password.',
    );
  });
});
