import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, postWithCsrf } from '../helpers/account-requests.js';
import { scanEveryLink, secretsIn } from '../helpers/mail-reading.js';
import { Client } from '../helpers/client.js';
import { hasPostgres } from '../helpers/postgres.js';
import type { LoopbackSmtp } from '../helpers/smtp.js';
import { type ReceivedMail } from '../helpers/smtp.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';

/*
 * Password reset (accounts spec, issue 19 item 2) as a person uses it, black-box: the
 * service in process, a real SMTP server on loopback, every mail parsed and its
 * link and code used as written. SQLite, and PostgreSQL under scripts/with-postgres.sh.
 */

const password = 'correct horse battery staple';
const newPassword = 'a brand new and long passphrase';
const userAgent = 'ResetTest/1.0 (X11; Linux x86_64)';

const browser = (service: AccountService) => new Client(service.url, { 'user-agent': userAgent });

const post = postWithCsrf;

const forgot = (client: Client, email: string) =>
  post(client, '/api/account/password/forgot', { email });
const reset = (client: Client, body: Record<string, unknown>) =>
  post(client, '/api/account/password/reset', body);

const secretsOf = (mail: ReceivedMail) => secretsIn(mail, '/account/password/reset');

async function signedIn(service: AccountService, email: string, pass = password) {
  const client = browser(service);
  expect((await client.signIn(email, pass)).status).toBe(200);
  expect(client.sessionCookie()).toBeDefined();
  return client;
}

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
];

describe.each(backends)('password reset on $name', ({ backend, skip }) => {
  let service: AccountService;
  let smtp: LoopbackSmtp;
  let mailed: MailService | undefined;

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend: backend,
      env: {
        MAIL_RETRY_SECONDS: '1',
      },
      users: ['ada', 'bob', 'cy', 'dee', 'eve', 'fay'].map((name) => `${name}@example.com`),
      password,
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(() => mailed?.close());

  it.skipIf(skip)(
    'a person: forgot → mail → link page → new password; old sessions end, none is made, the notice follows',
    async () => {
      const laptop = await signedIn(service, 'ada@example.com');
      const phone = await signedIn(service, 'ada@example.com');
      const person = browser(service);
      const asked = await forgot(person, 'ADA@example.com ');
      expect(asked.status).toBe(202);
      expect(await asked.json()).toEqual({ status: 'accepted' });
      const mail = await smtp.mailTo('ada@example.com', 0, /Reset your/);
      await scanEveryLink(smtp);
      const { link, token } = secretsOf(mail);
      expect(link.startsWith(service.url)).toBe(true);
      expect(mail.parsed.text).toMatch(/expires in 60 minutes/);
      // The link's page (a GET) consumes nothing; the POST does.
      await (await person.get(new URL(link).pathname + new URL(link).search)).arrayBuffer();
      const before = smtp.received.length;
      const done = await reset(person, { token, password: newPassword });
      expect(done.status).toBe(200);
      expect(await done.json()).toEqual({ status: 'password_changed' });
      expect(
        done.headers
          .getSetCookie()
          .some((c) => c.includes('session-token=') && !/session-token=;/.test(c)),
      ).toBe(false);
      expect(person.sessionCookie()).toBeUndefined();
      expect(await laptop.session()).toBeNull();
      expect(await phone.session()).toBeNull();
      const oldPassword = browser(service);
      await oldPassword.signIn('ada@example.com', password);
      expect(oldPassword.sessionCookie()).toBeUndefined();
      const again = browser(service);
      await again.signIn('ada@example.com', newPassword);
      expect(again.sessionCookie()).toBeDefined();
      const notice = await smtp.mailTo('ada@example.com', before, /password was changed/);
      expect(notice.parsed.text).toMatch(/\/account\/lock\?token=[\w-]+/);
      const events = (await (await again.get('/api/account/events')).json()) as {
        events: { type: string }[];
      };
      expect(events.events.map((e) => e.type)).toContain('password_reset');
    },
    60_000,
  );

  it.skipIf(skip)('a link works once: the second use is 400 invalid_token', async () => {
    const person = browser(service);
    const before = smtp.received.length;
    await forgot(person, 'bob@example.com');
    const { token } = secretsOf(await smtp.mailTo('bob@example.com', before, /Reset your/));
    expect((await reset(person, { token, password: newPassword })).status).toBe(200);
    expect(await errorCode(await reset(person, { token, password: `${newPassword} again` }))).toBe(
      '400 invalid_token',
    );
    expect(
      await errorCode(await reset(person, { token: 'x'.repeat(43), password: newPassword })),
    ).toBe('400 invalid_token');
  });

  it.skipIf(skip)('a weak password is 422 weak_password and keeps the link', async () => {
    const person = browser(service);
    const before = smtp.received.length;
    await forgot(person, 'cy@example.com');
    const { token } = secretsOf(await smtp.mailTo('cy@example.com', before, /Reset your/));
    expect(await errorCode(await reset(person, { token, password: 'short' }))).toBe(
      '422 weak_password',
    );
    expect((await reset(person, { token, password: newPassword })).status).toBe(200);
  });

  it.skipIf(skip)('a password change after the mail voids its link and code', async () => {
    const person = browser(service);
    const before = smtp.received.length;
    await forgot(person, 'dee@example.com');
    const { token, code } = secretsOf(await smtp.mailTo('dee@example.com', before, /Reset your/));
    const owner = await signedIn(service, 'dee@example.com');
    const changed = await post(owner, '/api/account/password/change', {
      currentPassword: password,
      newPassword: 'another long and fine passphrase',
    });
    expect(changed.status).toBe(200);
    expect(await errorCode(await reset(person, { token, password: newPassword }))).toBe(
      '400 invalid_token',
    );
    expect(
      await errorCode(
        await reset(person, { email: 'dee@example.com', code, password: newPassword }),
      ),
    ).toBe('400 invalid_token');
  });

  it.skipIf(skip)('the code from another device works; five wrong tries void it', async () => {
    const person = browser(service);
    let before = smtp.received.length;
    await forgot(person, 'eve@example.com');
    const first = secretsOf(await smtp.mailTo('eve@example.com', before, /Reset your/));
    const other = browser(service);
    expect(
      (
        await reset(other, {
          email: 'Eve@Example.com',
          code: first.code.toLowerCase(),
          password: newPassword,
        })
      ).status,
    ).toBe(200);
    before = smtp.received.length;
    await forgot(person, 'eve@example.com');
    const second = secretsOf(await smtp.mailTo('eve@example.com', before, /Reset your/));
    const wrong = second.code.startsWith('A') ? 'B' : 'A';
    for (let i = 0; i < 5; i += 1) {
      expect(
        await errorCode(
          await reset(other, {
            email: 'eve@example.com',
            code: `${wrong}${second.code.slice(1)}`,
            password: newPassword,
          }),
        ),
      ).toBe('400 invalid_token');
    }
    expect(
      await errorCode(
        await reset(other, { email: 'eve@example.com', code: second.code, password: newPassword }),
      ),
    ).toBe('400 invalid_token');
    // The code's five tries are spent; the 256-bit link of the same mail is not guessable and holds.
    expect(
      (await reset(person, { token: second.token, password: `${newPassword} two` })).status,
    ).toBe(200);
  });

  it.skipIf(skip)(
    'forgot answers the same bytes for a known, an unknown and a disabled account',
    async () => {
      const disabled = await service.cli(['users', 'disable', '--email', 'fay@example.com']);
      expect(disabled.code).toBe(0);
      const answers: string[] = [];
      for (const email of ['ada@example.com', 'nobody@example.com', 'fay@example.com']) {
        const response = await forgot(browser(service), email);
        const headers: string[] = [];
        response.headers.forEach((value, name) => {
          if (name !== 'date') headers.push(`${name}: ${value}`);
        });
        answers.push(JSON.stringify([response.status, headers, await response.text()]));
      }
      expect(answers[1]).toBe(answers[0]);
      expect(answers[2]).toBe(answers[0]);
      await sleep(1_000);
      expect(smtp.received.some((mail) => mail.envelopeTo.includes('fay@example.com'))).toBe(false);
    },
  );

  it.skipIf(skip)(
    'forgot is limited per e-mail, for an unknown address too: 429 with Retry-After',
    async () => {
      const client = browser(service);
      for (let i = 0; i < 10; i += 1)
        expect((await forgot(client, 'ghost@example.com')).status).toBe(202);
      const refused = await forgot(client, 'ghost@example.com');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    },
  );

  it.skipIf(skip)('without a CSRF token both routes answer 403 csrf', async () => {
    for (const path of ['/api/account/password/forgot', '/api/account/password/reset']) {
      const response = await fetch(`${service.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ada@example.com', token: 'x', password: newPassword }),
      });
      expect(await errorCode(response)).toBe('403 csrf');
    }
  });
});

describe('the reset pages, as plain forms (SQLite)', () => {
  let service: AccountService;
  let smtp: LoopbackSmtp;
  let mailed: MailService | undefined;

  beforeAll(async () => {
    mailed = await startMailService({ users: ['page@example.com'], password });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(() => mailed?.close());

  const csrfOf = (html: string) => /name="csrfToken" value="([^"]+)"/.exec(html)?.[1] ?? '';

  it('sign-in links to "forgot"; forgot → mail → reset page (no referrer, nothing used) → done', async () => {
    const person = browser(service);
    const signIn = await (await person.get('/api/auth/signin')).text();
    expect(signIn).toContain('href="/account/password/forgot">Forgot your password?</a>');

    const forgotPage = await person.get('/account/password/forgot');
    expect(forgotPage.status).toBe(200);
    expect(forgotPage.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const forgotHtml = await forgotPage.text();
    const sent = await person.postForm(
      '/account/password/forgot',
      { csrfToken: csrfOf(forgotHtml), email: 'page@example.com' },
      { origin: service.url, 'sec-fetch-site': 'same-origin' },
    );
    expect(sent.status).toBe(200);
    const sentHtml = await sent.text();
    expect(sentHtml).toContain("If an account exists for that address, we've sent a link");

    const { link } = secretsOf(await smtp.mailTo('page@example.com', 0, /Reset your/));
    const path = new URL(link).pathname + new URL(link).search;
    const resetPage = await person.get(path);
    expect(resetPage.status).toBe(200);
    expect(resetPage.headers.get('referrer-policy')).toBe('no-referrer');
    const resetHtml = await resetPage.text();
    // As every new-password form: the rules, a repeat, the account's address for password managers.
    expect(resetHtml).toContain(
      '<input type="email" name="username" autocomplete="username" value="page@example.com" hidden>',
    );
    expect(resetHtml).toMatch(
      /<p id="password-rules" class="hint field-hint">At least \d+ characters/,
    );
    expect(resetHtml).toContain('<input id="passwordRepeat" name="passwordRepeat" type="password"');
    // A differing repeat: refused by the page beside the field; nothing is checked or used.
    const differ = await person.postForm(
      '/account/password/reset',
      {
        csrfToken: csrfOf(resetHtml),
        token: new URL(link).searchParams.get('token') ?? '',
        password: newPassword,
        passwordRepeat: `${newPassword}!`,
      },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect(differ.status).toBe(422);
    const differHtml = await differ.text();
    expect(differHtml).toContain('The new password and its repetition differ.');
    expect(differHtml).toMatch(/<input id="passwordRepeat" [^>]*aria-invalid="true"/);
    expect(differHtml).toContain('name="token"');
    // A weak password: the form again, the link kept.
    const weak = await person.postForm(
      '/account/password/reset',
      {
        csrfToken: csrfOf(resetHtml),
        token: new URL(link).searchParams.get('token') ?? '',
        password: 'short',
        passwordRepeat: 'short',
      },
      // Under no-referrer a browser posts with Origin: null (and Sec-Fetch-Site: same-origin).
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect(weak.status).toBe(422);
    const weakHtml = await weak.text();
    expect(weakHtml).toContain('name="token"');
    expect(weakHtml).toContain('<title>Error: Choose a new password');
    const done = await person.postForm(
      '/account/password/reset',
      {
        csrfToken: csrfOf(weakHtml),
        token: new URL(link).searchParams.get('token') ?? '',
        password: newPassword,
        passwordRepeat: newPassword,
      },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Password changed — sign in');
    expect(person.sessionCookie()).toBeUndefined();
    // The used link, opened again, says so at once: no password field to type into first.
    const spent = await (await person.get(path)).text();
    expect(spent).toContain('This link or code is not valid');
    expect(spent).not.toContain('name="token"');
    // A foreign site's post is still refused.
    const foreign = await person.postForm(
      '/account/password/reset',
      { csrfToken: csrfOf(weakHtml), token: 'x', password: newPassword },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
    );
    expect(foreign.status).toBe(403);
  });
});
