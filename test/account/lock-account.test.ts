import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, postWithCsrf } from '../helpers/account-requests.js';
import { linkIn, scanEveryLink, secretsIn } from '../helpers/mail-reading.js';
import { Client } from '../helpers/client.js';
import { hasPostgres } from '../helpers/postgres.js';
import type { LoopbackSmtp } from '../helpers/smtp.js';
import {
  productionWithoutMail,
  startMailService,
  startService,
  type AccountService,
  type MailService,
} from './account-service.js';

/*
 * "This wasn't me" (accounts spec, "Security notices"; issue 19 item 5), black-box: the
 * service in process, a real SMTP server on loopback; a password reset sends the
 * notice, whose lock link is used as a person would (after a mail scanner opened every link).
 * SQLite, and PostgreSQL under scripts/with-postgres.sh.
 */

const password = 'correct horse battery staple';
const takenPassword = 'the password someone else chose';
const userAgent = 'LockTest/1.0 (X11; Linux x86_64)';

const browser = (service: AccountService) => new Client(service.url, { 'user-agent': userAgent });

const post = postWithCsrf;

const lock = (client: Client, token: string) => post(client, '/api/account/lock', { token });

/**
 * Someone with the mailbox resets the password: forgot → mail → reset link → new password.
 * Returns the notice's "this wasn't me" link (the real owner's way out).
 */
async function takeOver(service: AccountService, smtp: LoopbackSmtp, email: string) {
  const intruder = browser(service);
  let before = smtp.received.length;
  expect((await post(intruder, '/api/account/password/forgot', { email })).status).toBe(202);
  const resetLink = linkIn(
    await smtp.mailTo(email, before, /Reset your/),
    '/account/password/reset',
  );
  before = smtp.received.length;
  const token = new URL(resetLink).searchParams.get('token') ?? '';
  const reset = await post(intruder, '/api/account/password/reset', {
    token,
    password: takenPassword,
  });
  expect(reset.status).toBe(200);
  const notice = await smtp.mailTo(email, before, /password was changed/);
  const link = linkIn(notice, '/account/lock');
  expect(typeof notice.parsed.html === 'string' && notice.parsed.html).toContain(`href="${link}"`);
  return { link, token: new URL(link).searchParams.get('token') ?? '' };
}

async function signIn(service: AccountService, email: string, pass: string) {
  const client = browser(service);
  await client.signIn(email, pass);
  return client;
}

async function disabledIn(service: AccountService, email: string) {
  const listed = await service.cli(['users', 'list', '--json']);
  expect(listed.code).toBe(0);
  const rows = JSON.parse(listed.stdout) as { email: string; disabled: boolean }[];
  return rows.find((row) => row.email === email)?.disabled;
}

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
];

describe.each(backends)('"this wasn\'t me" on $name', ({ backend, skip }) => {
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
      users: ['ada', 'bob', 'cy', 'dee', 'eve', 'fay', 'gil'].map((name) => `${name}@example.com`),
      password,
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(() => mailed?.close());

  it.skipIf(skip)(
    "the notice's link, after a scanner opened it, locks the account: sessions end, sign-in is refused, the event is kept, an operator re-enables it",
    async () => {
      const { link, token } = await takeOver(service, smtp, 'ada@example.com');
      const intruder = await signIn(service, 'ada@example.com', takenPassword);
      const second = await signIn(service, 'ada@example.com', takenPassword);
      expect(await intruder.session()).not.toBeNull();

      // A scanner and the owner's own GET of the page use nothing.
      await scanEveryLink(smtp);
      const owner = browser(service);
      const page = await owner.get(new URL(link).pathname + new URL(link).search);
      expect(page.status).toBe(200);
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      await page.arrayBuffer();
      expect(await intruder.session()).not.toBeNull();
      expect(await disabledIn(service, 'ada@example.com')).toBe(false);

      const locked = await lock(owner, token);
      expect(locked.status).toBe(200);
      expect(locked.headers.get('cache-control')).toBe('no-store');
      expect(await locked.json()).toEqual({ status: 'locked' });
      expect(await intruder.session()).toBeNull();
      expect(await second.session()).toBeNull();
      expect((await signIn(service, 'ada@example.com', takenPassword)).sessionCookie()).toBe(
        undefined,
      );
      expect(await disabledIn(service, 'ada@example.com')).toBe(true);
      const listed = await service.cli(['users', 'list']);
      expect(listed.stdout).toMatch(/^ada@example\.com\t[^\t]*\tdisabled\t/m);

      // Single use.
      expect(await errorCode(await lock(owner, token))).toBe('400 invalid_token');

      // The operator re-enables it; the owner then resets the password as usual.
      expect((await service.cli(['users', 'enable', '--email', 'ada@example.com'])).code).toBe(0);
      expect(await disabledIn(service, 'ada@example.com')).toBe(false);
      const back = await signIn(service, 'ada@example.com', takenPassword);
      expect(back.sessionCookie()).toBeDefined();
      const events = (await (await back.get('/api/account/events')).json()) as {
        events: { type: string; device: string }[];
      };
      const lockEvent = events.events.find((event) => event.type === 'account_locked');
      expect(lockEvent?.device).toBe(userAgent);
      expect(events.events.map((event) => event.type)).toContain('password_reset');
    },
    60_000,
  );

  it.skipIf(skip)(
    "an operator's re-enable voids the lock links mailed before: they may have reached whoever had the account",
    async () => {
      const { token } = await takeOver(service, smtp, 'eve@example.com');
      expect((await service.cli(['users', 'disable', '--email', 'eve@example.com'])).code).toBe(0);
      expect((await service.cli(['users', 'enable', '--email', 'eve@example.com'])).code).toBe(0);
      expect(await errorCode(await lock(browser(service), token))).toBe('400 invalid_token');
      expect(await disabledIn(service, 'eve@example.com')).toBe(false);
    },
    60_000,
  );

  it.skipIf(skip)(
    'a password change by whoever holds a session sends the notice too; its link locks the account and ends that session',
    async () => {
      const intruder = await signIn(service, 'dee@example.com', password);
      const before = smtp.received.length;
      const changed = await post(intruder, '/api/account/password/change', {
        currentPassword: password,
        newPassword: takenPassword,
      });
      expect(changed.status).toBe(200);
      const notice = await smtp.mailTo('dee@example.com', before, /password was changed/);
      expect(notice.parsed.text).toContain('its sessions on other devices were signed out');
      const link = linkIn(notice, '/account/lock');
      await scanEveryLink(smtp);
      expect(await intruder.session()).not.toBeNull();
      const token = new URL(link).searchParams.get('token') ?? '';
      expect((await lock(browser(service), token)).status).toBe(200);
      expect(await intruder.session()).toBeNull();
      expect(await disabledIn(service, 'dee@example.com')).toBe(true);
    },
    60_000,
  );

  it.skipIf(skip)(
    'a later password change by the intruder does not void the link (it is bound to the user only)',
    async () => {
      const { token } = await takeOver(service, smtp, 'bob@example.com');
      const intruder = await signIn(service, 'bob@example.com', takenPassword);
      const changed = await post(intruder, '/api/account/password/change', {
        currentPassword: takenPassword,
        newPassword: 'yet another password of theirs',
      });
      expect(changed.status).toBe(200);
      expect(await intruder.session()).not.toBeNull();
      expect((await lock(browser(service), token)).status).toBe(200);
      expect(await intruder.session()).toBeNull();
      expect(await disabledIn(service, 'bob@example.com')).toBe(true);
    },
    60_000,
  );

  it.skipIf(skip)(
    "the lock mails the account's address that it is locked and to contact the administrator, with no link in it",
    async () => {
      const { token } = await takeOver(service, smtp, 'fay@example.com');
      const before = smtp.received.length;
      expect((await lock(browser(service), token)).status).toBe(200);
      const notice = await smtp.mailTo('fay@example.com', before, /account is locked/);
      expect(notice.parsed.text).toContain('every session of it was signed out');
      expect(notice.parsed.text).toContain('contact your administrator');
      expect(notice.parsed.text).not.toMatch(/https?:\/\//);
    },
    60_000,
  );

  it.skipIf(skip)(
    "a lock link mailed to an address the account has left stops working; the move's own notice, sent to the old address, keeps working after a further move",
    async () => {
      const moveTo = async (client: Client, email: string) => {
        const before = smtp.received.length;
        expect((await post(client, '/api/account/email/change', { email })).status).toBe(202);
        const { token } = secretsIn(
          await smtp.mailTo(email, before, /Confirm your new address/),
          '/account/email/verify',
        );
        const after = smtp.received.length;
        expect((await post(client, '/api/account/email/verify', { token })).status).toBe(200);
        return after;
      };
      const intruder = await signIn(service, 'gil@example.com', password);
      let before = smtp.received.length;
      const changed = await post(intruder, '/api/account/password/change', {
        currentPassword: password,
        newPassword: takenPassword,
      });
      expect(changed.status).toBe(200);
      const passwordNotice = await smtp.mailTo('gil@example.com', before, /password was changed/);
      const passwordLink = linkIn(passwordNotice, '/account/lock');

      before = await moveTo(intruder, 'gil.taken@example.com');
      const moveNotice = await smtp.mailTo(
        'gil@example.com',
        before,
        /address of your .* was changed/,
      );
      const moveLink = linkIn(moveNotice, '/account/lock');
      // The intruder moves the account on again: the old owner's move notice still speaks for it.
      await moveTo(intruder, 'gil.again@example.com');

      const token = (link: string) => new URL(link).searchParams.get('token') ?? '';
      expect(await errorCode(await lock(browser(service), token(passwordLink)))).toBe(
        '400 invalid_token',
      );
      expect(await intruder.session()).not.toBeNull();
      before = smtp.received.length;
      expect((await lock(browser(service), token(moveLink))).status).toBe(200);
      expect(await intruder.session()).toBeNull();
      expect(await disabledIn(service, 'gil.again@example.com')).toBe(true);
      // The locked notice goes to the account's address now.
      await smtp.mailTo('gil.again@example.com', before, /account is locked/);
    },
    60_000,
  );

  it.skipIf(skip)('an account an operator disabled already still answers locked', async () => {
    const { token } = await takeOver(service, smtp, 'cy@example.com');
    expect((await service.cli(['users', 'disable', '--email', 'cy@example.com'])).code).toBe(0);
    const locked = await lock(browser(service), token);
    expect(locked.status).toBe(200);
    expect(await locked.json()).toEqual({ status: 'locked' });
    expect(await disabledIn(service, 'cy@example.com')).toBe(true);
  });

  it.skipIf(skip)(
    'unknown tokens are 400 invalid_token, a missing one 422, and no CSRF token 403',
    async () => {
      const client = browser(service);
      for (const token of ['x'.repeat(43), '', 'é'.repeat(5)]) {
        expect(await errorCode(await lock(client, token))).toBe('400 invalid_token');
      }
      expect(await errorCode(await post(client, '/api/account/lock', {}))).toBe(
        '422 invalid_field',
      );
      const bare = await fetch(`${service.url}/api/account/lock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: 'x' }),
      });
      expect(await errorCode(bare)).toBe('403 csrf');
    },
  );
});

describe('the lock pages, as plain forms (SQLite)', () => {
  let service: AccountService;
  let smtp: LoopbackSmtp;
  let mailed: MailService | undefined;

  beforeAll(async () => {
    mailed = await startMailService({
      users: ['page@example.com'],
      password,
      // Pages that lead back: the app, its sign-in page, and who to ask.
      env: {
        PAGE_PRODUCT_NAME: 'Acme',
        APP_URL: 'https://app.acme.test/',
        APP_SIGNIN_URL: 'https://app.acme.test/login',
        SUPPORT_CONTACT: 'help@acme.test',
      },
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(() => mailed?.close());

  const csrfOf = (html: string) => /name="csrfToken" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const formPost = { origin: 'null', 'sec-fetch-site': 'same-origin' };

  it('the page asks, its button locks, and a second press explains the link is spent', async () => {
    const { link, token } = await takeOver(service, smtp, 'page@example.com');
    const intruder = await signIn(service, 'page@example.com', takenPassword);
    const owner = browser(service);
    const asked = await owner.get(new URL(link).pathname + new URL(link).search);
    expect(asked.status).toBe(200);
    expect(asked.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(asked.headers.get('referrer-policy')).toBe('no-referrer');
    const askedHtml = await asked.text();
    expect(askedHtml).toContain('Lock your account?');
    expect(askedHtml).toContain('Contact <a href="mailto:help@acme.test">help@acme.test</a>');
    expect(askedHtml).toContain('<p class="brand">Acme</p>');
    expect(askedHtml).toContain('<a href="https://app.acme.test/">Back to Acme</a>');
    expect(askedHtml).toContain(
      '<a href="https://app.acme.test/login">It was me: back to sign in</a>',
    );
    expect(askedHtml).toContain('<button type="submit">Lock my account</button>');
    expect(askedHtml).not.toContain('<script');
    expect(await intruder.session()).not.toBeNull();

    // A foreign site's post is refused and locks nothing.
    const foreign = await owner.postForm(
      '/account/lock',
      { csrfToken: csrfOf(askedHtml), token },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
    );
    expect(foreign.status).toBe(403);
    expect(await intruder.session()).not.toBeNull();

    const done = await owner.postForm(
      '/account/lock',
      { csrfToken: csrfOf(askedHtml), token },
      formPost,
    );
    expect(done.status).toBe(200);
    expect(done.headers.get('referrer-policy')).toBe('no-referrer');
    const doneHtml = await done.text();
    expect(doneHtml).toContain('Your account is locked');
    expect(doneHtml).toContain('contact <a href="mailto:help@acme.test">help@acme.test</a>');
    const lockedMail = await smtp.mailTo('page@example.com', 0, /account is locked/);
    expect(lockedMail.parsed.text).toContain('contact help@acme.test: they can unlock it');
    expect(await intruder.session()).toBeNull();

    const again = await owner.postForm(
      '/account/lock',
      { csrfToken: csrfOf(askedHtml), token },
      formPost,
    );
    expect(again.status).toBe(400);
    const againHtml = await again.text();
    expect(againHtml).toContain('<title>Error: Lock your account?');
    expect(againHtml).toContain('expired or been used already');
    expect(againHtml).not.toContain('name="token"');
    // Opened again, the spent link says so at once, with no button to press.
    const reopened = await (await owner.get(new URL(link).pathname + new URL(link).search)).text();
    expect(reopened).toContain('expired or been used already');
    // This suite's SUPPORT_CONTACT is who to ask, not an unnamed administrator.
    expect(reopened).toContain('using your account, contact help@acme.test.');
    expect(reopened).not.toContain('Lock my account</button>');
  });

  it('a link cut short shows no button', async () => {
    const page = await browser(service).get('/account/lock');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('This link is not complete');
    expect(html).not.toContain('<button type="submit">Lock my account</button>');
  });
});

describe('without SMTP_URL in production', () => {
  it('the lock route and page answer 404', async () => {
    const { service, close } = await startService({ env: productionWithoutMail });
    try {
      const route = await fetch(`${service.url}/api/account/lock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: 'x' }),
      });
      expect(route.status).toBe(404);
      expect(((await route.json()) as { error: { code: string } }).error.code).toBe('not_found');
      expect((await fetch(`${service.url}/account/lock?token=x`)).status).toBe(404);
    } finally {
      await close();
    }
  }, 60_000);
});
