import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf } from '../helpers/account-requests.js';
import { databaseBackends } from '../helpers/backends.js';
import { Client } from '../helpers/client.js';
import { linkIn, scanEveryLink } from '../helpers/mail-reading.js';
import type { LoopbackSmtp, ReceivedMail } from '../helpers/smtp.js';
import { softPasskey } from '../helpers/soft-passkey.js';
import { base, codeAt, refusalCode, stepMs, turnOnTotp } from '../helpers/totp-codes.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';

/*
 * The new-device notice (issue 40 item 3, adoption spec §5), black-box: the service in process
 * over real HTTP, a real SMTP server on loopback, clients at addresses of their own through the
 * trusted proxy's X-Forwarded-For, each with its own cookie jar (a device). SQLite, and
 * PostgreSQL under scripts/with-postgres.sh.
 */

const password = 'correct horse battery staple';
const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0';
const chrome =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 Safari/537.36';
const iphone =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const subject = /^New sign-in to your /;

/** A browser (a cookie jar: a device) at `ip`. */
const browser = (service: AccountService, ip: string, userAgent = firefox) =>
  new Client(service.url, { 'x-forwarded-for': ip, 'user-agent': userAgent });

/** The account's events as its owner lists them (oldest first), through a live session. */
async function eventTypes(owner: Client): Promise<string[]> {
  const response = await owner.get('/api/account/events');
  expect(response.status).toBe(200);
  const { events } = (await response.json()) as { events: { type: string }[] };
  return events.map((event) => event.type).reverse();
}

/**
 * Waits until the account's record holds `count` events of `type`: sign-in's record is written
 * after its answer, and a notice is queued in the same transaction, so once the record shows
 * the sign-in, whether it was new is settled.
 */
async function recorded(owner: Client, type: string, count: number): Promise<string[]> {
  for (let tries = 0; ; tries += 1) {
    const types = await eventTypes(owner);
    if (types.filter((seen) => seen === type).length >= count) return types;
    if (tries > 200) throw new Error(`no ${count} ${type} events in: ${types.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function signedIn(client: Client, email: string, extra: Record<string, string> = {}) {
  const answer = await client.signIn(email, password, undefined, extra);
  expect([answer.status, await refusalCode(answer)]).toEqual([200, null]);
  return client;
}

describe.each(databaseBackends('new-device'))('the new-device notice on $name', (database) => {
  const skip = database.skip;
  let service: AccountService;
  let smtp: LoopbackSmtp;
  let mailed: MailService | undefined;

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend: database.dialect,
      env: { TRUST_PROXY: '127.0.0.1', MAIL_RETRY_SECONDS: '1' },
      users: ['ada', 'bob', 'cy', 'dee'].map((name) => `${name}@example.com`),
      password,
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(() => mailed?.close());

  /** New-device notices to `email` so far. */
  const notices = (email: string): ReceivedMail[] =>
    smtp.received.filter(
      (mail) => mail.envelopeTo.includes(email) && subject.test(mail.parsed.subject ?? ''),
    );

  it.skipIf(skip)(
    'mails once for a new device on a new network, after the right password only: never for the first sign-in, a known network or the same device again',
    async () => {
      const email = 'ada@example.com';
      // The first sign-in ever: nothing to compare with, nothing mailed.
      const home = await signedIn(browser(service, '203.0.113.7'), email);
      await recorded(home, 'signin', 1);
      // Another browser at home: a new device on a known network.
      await signedIn(browser(service, '203.0.113.40', chrome), email);
      await recorded(home, 'signin', 2);

      // Far away, on a phone: a wrong password first tells nobody anything.
      const phone = browser(service, '198.51.100.23', iphone);
      const wrong = await phone.signIn(email, 'not the password at all');
      expect(await refusalCode(wrong)).toBe('credentials');
      await recorded(home, 'signin_failed', 1);
      // Then the right one: one notice.
      await signedIn(phone, email);
      const types = await recorded(home, 'signin_new_device', 1);
      expect(types).toEqual(['signin', 'signin', 'signin_failed', 'signin', 'signin_new_device']);
      const notice = await smtp.mailTo(email, 0, subject);
      const text = notice.parsed.text ?? '';
      expect(text).toMatch(/When: {4}\d{1,2} [A-Z][a-z]+ 20\d\d, \d\d:\d\d UTC\n/);
      expect(text).toContain('Device:  Safari 17 on iOS');
      expect(text).toContain('Network: 198.51.100.0/24');
      expect(text).not.toContain('198.51.100.23');
      const link = linkIn(notice, '/account/lock');
      const html = typeof notice.parsed.html === 'string' ? notice.parsed.html : '';
      expect(html).toContain(`href="${link}"`);
      expect(html).toContain('198.51.100.0/24');
      expect(html).not.toContain('198.51.100.23');

      // The same phone again, signed out and in, then from yet another network: nothing.
      await phone.signOut();
      await signedIn(phone, email);
      phone.defaultHeaders['x-forwarded-for'] = '192.0.2.200';
      await signedIn(phone, email);
      const after = await recorded(home, 'signin', 5);
      expect(after.filter((type) => type === 'signin_new_device')).toHaveLength(1);
      expect(notices(email)).toHaveLength(1);

      // The account page's history says it in words.
      const page = await home.get('/account');
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Signed in from a new device and network');
    },
    60_000,
  );

  it.skipIf(skip)(
    "the notice's lock link ends every session; unlocked, the intruder's device is new again",
    async () => {
      const email = 'bob@example.com';
      const home = await signedIn(browser(service, '203.0.113.8'), email);
      await recorded(home, 'signin', 1);
      const intruder = await signedIn(browser(service, '192.0.2.66', chrome), email);
      await recorded(home, 'signin_new_device', 1);
      const link = linkIn(await smtp.mailTo(email, 0, subject), '/account/lock');

      await scanEveryLink(smtp);
      expect(await intruder.session()).not.toBeNull();
      const owner = browser(service, '203.0.113.8');
      const token = new URL(link).searchParams.get('token') ?? '';
      const locked = await postWithCsrf(owner, '/api/account/lock', { token });
      expect([locked.status, await locked.json()]).toEqual([200, { status: 'locked' }]);
      expect(await intruder.session()).toBeNull();
      expect(await home.session()).toBeNull();

      // The operator re-enables it; the intruder comes back from where they were: told again.
      expect((await service.cli(['users', 'enable', '--email', email])).code).toBe(0);
      const before = smtp.received.length;
      await signedIn(intruder, email);
      await smtp.mailTo(email, before, subject);
    },
    60_000,
  );

  it.skipIf(skip)(
    'a sign-in stopped at the second factor mails nothing until the code is right',
    async () => {
      const email = 'cy@example.com';
      const home = await signedIn(browser(service, '203.0.113.9'), email);
      // The codes of the steps now, whenever this runs (the service's clock is the real one).
      const step = () => Math.round((Date.now() - base) / stepMs);
      const { secret } = await turnOnTotp(home, step());
      await recorded(home, 'totp_enabled', 1);

      const away = browser(service, '198.51.100.77', chrome);
      const stopped = await away.signIn(email, password);
      expect(await refusalCode(stopped)).toBe('second_factor_required');
      // The stop notes nothing (the password was right: no failure). Settled: a wrong password
      // from elsewhere, noted after it, is in the record.
      await browser(service, '192.0.2.200').signIn(email, 'not the password');
      await recorded(home, 'signin_failed', 1);
      expect(await eventTypes(home)).not.toContain('signin_new_device');
      expect(notices(email)).toHaveLength(0);
      // The code, on the challenge the right password left in this browser.
      await signedIn(away, email, { password: '', otp: codeAt(secret, step() + 1) });
      await recorded(home, 'signin_new_device', 1);
      await smtp.mailTo(email, 0, subject);
      expect(notices(email)).toHaveLength(1);
    },
    60_000,
  );

  it.skipIf(skip)('a passkey sign-in from a new device and network mails too', async () => {
    const email = 'dee@example.com';
    const home = await signedIn(browser(service, '203.0.113.10'), email);
    const key = softPasskey();
    const registerOptions = (await (
      await home.get('/api/auth/webauthn-options/passkey?action=register')
    ).json()) as { options: { challenge: string } };
    await home.postForm('/api/auth/callback/passkey', {
      csrfToken: await home.csrfToken(),
      action: 'register',
      data: key.register({ challenge: registerOptions.options.challenge, origin: service.url }),
    });
    await recorded(home, 'passkey_added', 1);

    const away = browser(service, '2001:db8:7:1::5', chrome);
    const got = (await (
      await away.get('/api/auth/webauthn-options/passkey?action=authenticate')
    ).json()) as { options: { challenge: string } };
    const data = key.assert({
      challenge: got.options.challenge,
      origin: service.url,
      userVerified: true,
      counter: 1,
    });
    const answer = await away.postForm(
      '/api/auth/callback/passkey',
      { csrfToken: await away.csrfToken(), action: 'authenticate', data },
      { 'x-auth-return-redirect': '1' },
    );
    expect(answer.status).toBe(200);
    expect(await away.session()).toMatchObject({ user: { email } });
    await recorded(home, 'signin_new_device', 1);
    const text = (await smtp.mailTo(email, 0, subject)).parsed.text ?? '';
    expect(text).toContain('Network: 2001:db8:7::/48');
  });
});

describe('NEW_DEVICE_NOTICE=off', () => {
  let mailed: MailService | undefined;

  beforeAll(async () => {
    mailed = await startMailService({
      env: { TRUST_PROXY: '127.0.0.1', NEW_DEVICE_NOTICE: 'off' },
      users: ['ada@example.com'],
      password,
    });
  }, 60_000);
  afterAll(() => mailed?.close());

  it('records no new device and mails nothing', async () => {
    const { service, smtp } = mailed as MailService;
    const home = await signedIn(browser(service, '203.0.113.7'), 'ada@example.com');
    await signedIn(browser(service, '198.51.100.23', iphone), 'ada@example.com');
    expect(await recorded(home, 'signin', 2)).toEqual(['signin', 'signin']);
    // A mail that does go out, queued after: the outbox had its turn by the time it arrives.
    await postWithCsrf(home, '/api/account/email/verification', {});
    await smtp.mailTo('ada@example.com', 0, /Confirm your address/);
    expect(smtp.received.filter((mail) => subject.test(mail.parsed.subject ?? ''))).toEqual([]);
  });
});
