import { setTimeout as sleep } from 'node:timers/promises';
import { TOTP, Secret } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf } from '../helpers/account-requests.js';
import { databaseBackends } from '../helpers/backends.js';
import { scanEveryLink } from '../helpers/mail-reading.js';
import { newWebhookSecret, startReceiver, until } from '../helpers/webhooks.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';
import {
  askMail,
  auditEntries,
  clientAt,
  mailedSecrets,
  pressLinkButton,
  refusalOf,
  sessionEmail,
  typeCode,
  urlOf,
} from './email-signin-helpers.js';

/*
 * Sign-in by e-mail (issue 40, items 1 and 2; adoption spec §2), black-box: the service in
 * process with EMAIL_SIGNIN=on, a real SMTP server on loopback, every mail parsed, a webhook
 * receiver verifying what it is sent. SQLite, and PostgreSQL under scripts/with-postgres.sh.
 * Auth.js's e-mail provider's wire; one mail with a link and a code; the link's GET spends
 * nothing, its button signs in; the code signs in only the browser that asked; second factors
 * still asked for. The addresses' equal answers are test/account/email-signin-answers.test.ts's.
 */

const password = 'correct horse battery staple';

const backends = databaseBackends('email-signin');

describe.each(backends)('sign-in by e-mail on $name', ({ dialect: backend, skip }) => {
  let mailed: MailService;
  let service: AccountService;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    if (skip) return;
    const secret = newWebhookSecret();
    receiver = await startReceiver(secret);
    mailed = await startMailService({
      backend,
      users: ['ada@example.com', 'code@example.com', 'totp@example.com', 'changed@example.com'],
      password,
      env: {
        EMAIL_SIGNIN: 'on',
        TRUST_PROXY: '127.0.0.1',
        MAIL_RETRY_SECONDS: '1',
        WEBHOOK_URL: receiver.url,
        WEBHOOK_SECRET: secret,
      },
    });
    service = mailed.service;
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
    await receiver?.close();
  });

  it.skipIf(skip)(
    "GET /api/auth/providers lists Auth.js's e-mail providers, `email` and its `nodemailer` id",
    async () => {
      const providers = (await (
        await clientAt(service).get('/api/auth/providers')
      ).json()) as Record<string, unknown>;
      for (const id of ['email', 'nodemailer'])
        expect(providers[id]).toEqual({
          id,
          name: id === 'email' ? 'Email' : 'Nodemailer',
          type: 'email',
          signinUrl: `${service.url}/api/auth/signin/${id}`,
          callbackUrl: `${service.url}/api/auth/callback/email`,
        });
    },
  );

  it.skipIf(skip)(
    "a known address: Auth.js's answer, one mail with a link and a code; a scanner's GETs spend nothing; the button signs in, the address now verified, recorded as method `email`",
    async () => {
      const asking = clientAt(service, '198.51.100.1');
      const since = mailed.smtp.received.length;
      const asked = await askMail(asking, 'Ada@Example.com');
      expect(asked.status).toBe(200);
      expect(asked.headers.get('location')).toBe(
        `${service.url}/api/auth/verify-request?provider=email&type=email`,
      );
      expect((await urlOf(asked)).href).toBe(
        `${service.url}/api/auth/verify-request?provider=email&type=email`,
      );
      const { mail, link, code } = await mailedSecrets(mailed.smtp, 'ada@example.com', since);
      expect(mail.parsed.subject).toBe('Sign in to Gatehouse');
      expect(code).toMatch(/^[2-9A-HJ-NP-Z]{8}$/);
      expect(new URL(link).searchParams.get('callbackUrl')).toBe(`${service.url}/app`);
      // The same link and code in the HTML body, the link's `&` escaped in its href.
      const html = String(mail.parsed.html);
      expect(html).toContain(`href="${link.replace(/&/g, '&amp;')}"`);
      expect(html).toContain('>Sign in</a>');
      expect(html).toContain(`<strong style="font-size:18px;letter-spacing:2px">${code}</strong>`);
      expect(mail.parsed.text).toMatch(/^Hello ada,$/m);
      // Defender's safe links, twice: every link of every mail opened before anyone reads it.
      expect(await scanEveryLink(mailed.smtp)).toBeGreaterThan(0);
      await scanEveryLink(mailed.smtp);
      const reader = clientAt(service, '203.0.113.50');
      const signedIn = await pressLinkButton(reader, link);
      expect(signedIn.status).toBe(200);
      expect((await urlOf(signedIn)).href).toBe(`${service.url}/app`);
      expect(await sessionEmail(reader)).toBe('ada@example.com');
      // The link, once used, signs nobody in again; the code of the same mail went with it.
      expect(await refusalOf(await pressLinkButton(clientAt(service), link))).toBe(
        'CredentialsSignin email_link_invalid',
      );
      expect(await refusalOf(await typeCode(asking, 'ada@example.com', code))).toBe(
        'CredentialsSignin email_code_invalid',
      );
      const account = (await (await reader.get('/api/account')).json()) as {
        user: { emailVerified: boolean };
      };
      expect(account.user.emailVerified).toBe(true);
      const sessions = (await (await reader.get('/api/account/sessions')).json()) as {
        sessions: { current: boolean; method: string }[];
      };
      expect(sessions.sessions.find((s) => s.current)?.method).toBe('email');
      await until(() => receiver.received.some((e) => e.type === 'session.created'), 10_000);
      expect(receiver.received.map((event) => event.type)).toEqual(
        expect.arrayContaining(['email.verified', 'session.created']),
      );
      await sleep(200);
      expect(await auditEntries(service, 'signin')).toEqual(
        expect.arrayContaining([expect.objectContaining({ detail: { method: 'email' } })]),
      );
    },
    60_000,
  );

  it.skipIf(skip)(
    'the code signs in only the browser that asked: typed in another it is refused and spends one of its five tries',
    async () => {
      const asking = clientAt(service, '198.51.100.2');
      const since = mailed.smtp.received.length;
      await askMail(asking, 'code@example.com', { provider: 'nodemailer' });
      const { code } = await mailedSecrets(mailed.smtp, 'code@example.com', since);
      const elsewhere = clientAt(service, '198.51.100.2');
      const refused = await typeCode(elsewhere, 'code@example.com', code);
      expect(refused.status).toBe(200);
      expect(await refusalOf(refused)).toBe('CredentialsSignin email_code_invalid');
      expect(await sessionEmail(elsewhere)).toBeNull();
      // Three wrong guesses in the asking browser: with the one from elsewhere, four tries gone.
      for (const guess of ['22222222', '33333333', '44444444'])
        expect(await refusalOf(await typeCode(asking, 'code@example.com', guess))).toBe(
          'CredentialsSignin email_code_invalid',
        );
      const right = await typeCode(asking, 'code@example.com', code.toLowerCase());
      expect(await urlOf(right)).toEqual(new URL(`${service.url}/app`));
      expect(await sessionEmail(asking)).toBe('code@example.com');
      // The wrong codes are in the account's history, in words (written after their answers).
      await expect
        .poll(
          async () => (await (await asking.get('/account')).text()).match(/Wrong code[^<]*/)?.[0],
          {
            timeout: 10_000,
          },
        )
        .toBe('Wrong code from a sign-in mail entered');

      // A fresh mail: five wrong tries spend its code, the right one then too.
      const again = mailed.smtp.received.length;
      await askMail(asking, 'code@example.com');
      const fresh = await mailedSecrets(mailed.smtp, 'code@example.com', again);
      for (const guess of ['22222222', '33333333', '44444444', '55555555', '66666666'])
        await typeCode(asking, 'code@example.com', guess);
      expect(await refusalOf(await typeCode(asking, 'code@example.com', fresh.code))).toBe(
        'CredentialsSignin email_code_invalid',
      );
      // Its link still works: it is no guess.
      expect((await pressLinkButton(clientAt(service), fresh.link)).status).toBe(200);
    },
    60_000,
  );

  it.skipIf(skip)(
    'a second factor is still asked for after the link: the challenge, then the app code, signs in as `email otp`',
    async () => {
      const owner = clientAt(service, '198.51.100.3');
      expect((await owner.signIn('totp@example.com', password)).status).toBe(200);
      const setup = await postWithCsrf(owner, '/api/account/totp/setup', {});
      const { secret } = (await setup.json()) as { secret: string };
      const codeAt = (offsetMs: number) =>
        TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + offsetMs });
      expect(
        (await postWithCsrf(owner, '/api/account/totp/confirm', { code: codeAt(0) })).status,
      ).toBe(200);
      const since = mailed.smtp.received.length;
      const browser = clientAt(service, '198.51.100.3');
      await askMail(browser, 'totp@example.com');
      const { link } = await mailedSecrets(mailed.smtp, 'totp@example.com', since);
      const proved = await pressLinkButton(browser, link);
      expect(await refusalOf(proved)).toBe('CredentialsSignin second_factor_required');
      expect(await sessionEmail(browser)).toBeNull();
      // The next step's code (this one's was spent by the confirmation), without the mail again.
      const second = await postWithCsrf(browser, '/api/auth/callback/credentials', {
        otp: codeAt(30_000),
      });
      expect(second.status).toBe(302);
      expect(await sessionEmail(browser)).toBe('totp@example.com');
      const sessions = (await (await browser.get('/api/account/sessions')).json()) as {
        sessions: { current: boolean; method: string }[];
      };
      expect(sessions.sessions.find((s) => s.current)?.method).toBe('email');
    },
    60_000,
  );

  it.skipIf(skip)(
    "a link and code mailed before the account's password changed are void",
    async () => {
      const since = mailed.smtp.received.length;
      const asking = clientAt(service, '198.51.100.4');
      await askMail(asking, 'changed@example.com');
      const { link, code } = await mailedSecrets(mailed.smtp, 'changed@example.com', since);
      const set = await service.cli(
        ['users', 'set-password', '--email', 'changed@example.com', '--password-stdin'],
        'an entirely new passphrase',
      );
      expect(set.code).toBe(0);
      expect(await refusalOf(await pressLinkButton(clientAt(service), link))).toBe(
        'CredentialsSignin email_link_invalid',
      );
      expect(await refusalOf(await typeCode(asking, 'changed@example.com', code))).toBe(
        'CredentialsSignin email_code_invalid',
      );
    },
    60_000,
  );

  it.skipIf(skip)(
    'what is refused before any mail: no CSRF pair, an address that is none; a link that is none',
    async () => {
      const client = clientAt(service, '198.51.100.5');
      const noCsrf = await client.postForm(
        '/api/auth/signin/email',
        { email: 'ada@example.com' },
        { 'x-auth-return-redirect': '1' },
      );
      expect(await refusalOf(noCsrf)).toBe('MissingCSRF');
      for (const email of ['', 'not an address', 'Ada <ada@example.com>'])
        expect(await refusalOf(await askMail(client, email))).toBe(
          'EmailSignInError email_invalid',
        );
      const csrfToken = await client.csrfToken();
      const junk = await client.postForm(
        '/api/auth/callback/email',
        { csrfToken, token: 'x'.repeat(43) },
        { 'x-auth-return-redirect': '1' },
      );
      expect(await refusalOf(junk)).toBe('CredentialsSignin email_link_invalid');
      // A plain form post follows Auth.js's 302 to the page that words it.
      const form = await client.postForm('/api/auth/signin/email', { csrfToken, email: 'nope' });
      expect(form.status).toBe(302);
      expect(form.headers.get('location')).toBe(
        `${service.url}/api/auth/signin?error=EmailSignInError&code=email_invalid`,
      );
    },
  );
});
