import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { scanEveryLink, secretsIn } from '../helpers/mail-reading.js';
import { hasPostgres } from '../helpers/postgres.js';
import type { ReceivedMail } from '../helpers/smtp.js';
import {
  productionWithoutMail,
  startMailService,
  startService,
  type AccountService,
  type MailService,
} from './account-service.js';
import { bytesOf } from './equal-answers.js';

/*
 * Verify e-mail and change e-mail (accounts spec; issue 19 item 3), as a person does them,
 * black-box: the service in process, a real SMTP server on loopback, every
 * mail parsed and its link or code used as written, after a mail scanner opened every link.
 * SQLite, and PostgreSQL under scripts/with-postgres.sh.
 */

const password = 'correct horse battery staple';
const userAgent = 'EmailTest/1.0 (X11; Linux x86_64)';

const browser = (service: AccountService) => new Client(service.url, { 'user-agent': userAgent });

const post = (client: Client, path: string, body: Record<string, unknown> = {}) =>
  postWithCsrf(client, path, body);
const resend = (client: Client) => post(client, '/api/account/email/verification');
const verify = (client: Client, body: Record<string, unknown>) =>
  post(client, '/api/account/email/verify', body);
const change = (client: Client, email: string) =>
  post(client, '/api/account/email/change', { email });

/** The link, token and code of a verify or change mail, as a person reads them. */
const secretsOf = (mail: ReceivedMail) => secretsIn(mail, '/account/email/verify');

async function signedIn(service: AccountService, email: string, pass = password) {
  const client = browser(service);
  expect((await client.signIn(email, pass)).status).toBe(200);
  expect(client.sessionCookie()).toBeDefined();
  return client;
}

async function accountOf(client: Client) {
  const response = await client.get('/api/account');
  expect(response.status).toBe(200);
  return ((await response.json()) as { user: { email: string; emailVerified: boolean } }).user;
}

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
];

describe.each(backends)('verify and change e-mail on $name', ({ backend, skip }) => {
  let mailed: MailService;
  let service: AccountService;
  let smtp: MailService['smtp'];

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend,
      users: ['ada', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jo'].map(
        (name) => `${name}@example.com`,
      ),
      password,
      // Every line the service can write, to show that none holds a secret.
      env: { MAIL_RETRY_SECONDS: '1', LOG_LEVEL: 'debug' },
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it.skipIf(skip)(
    'verify: mail again → scanner → link page (uses nothing) → button → verified; once only',
    async () => {
      const ada = await signedIn(service, 'ada@example.com');
      expect((await accountOf(ada)).emailVerified).toBe(false);
      const before = smtp.received.length;
      const sent = await resend(ada);
      expect(sent.status).toBe(202);
      expect(await sent.json()).toEqual({ status: 'accepted' });
      const mail = await smtp.mailTo('ada@example.com', before, /Confirm your address/);
      await scanEveryLink(smtp);
      const { link, token } = secretsOf(mail);
      expect(link.startsWith(`${service.url}/account/email/verify?token=`)).toBe(true);
      expect(mail.parsed.text).toMatch(/expires in 60 minutes/);
      const page = await browser(service).get(new URL(link).pathname + new URL(link).search);
      expect(page.status).toBe(200);
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect((await accountOf(ada)).emailVerified).toBe(false);
      // Another device, signed out, presses the button.
      const other = browser(service);
      const done = await verify(other, { token });
      expect(done.status).toBe(200);
      expect(await done.json()).toEqual({ status: 'verified' });
      expect((await accountOf(ada)).emailVerified).toBe(true);
      expect(await errorCode(await verify(other, { token }))).toBe('400 invalid_token');
      expect(await errorCode(await verify(other, { token: 'x'.repeat(43) }))).toBe(
        '400 invalid_token',
      );
      // Verified already: 202, no mail, and the answer says why.
      const again = smtp.received.length;
      const resent = await resend(ada);
      expect(resent.status).toBe(202);
      expect(await resent.json()).toEqual({ status: 'already_verified' });
      await sleep(500);
      expect(smtp.received.length).toBe(again);
      expect(service.output()).toContain('/account/email/verify');
      expect(service.output()).not.toContain(token);
      expect(service.output()).not.toContain(secretsOf(mail).code);
    },
    60_000,
  );

  it.skipIf(skip)(
    'verify by code from another device; five wrong tries void the code',
    async () => {
      const bob = await signedIn(service, 'bob@example.com');
      let before = smtp.received.length;
      await resend(bob);
      const first = secretsOf(await smtp.mailTo('bob@example.com', before, /Confirm your/));
      before = smtp.received.length;
      await resend(bob);
      const second = secretsOf(await smtp.mailTo('bob@example.com', before, /Confirm your/));
      const other = browser(service);
      const wrong = second.code.startsWith('A') ? 'B' : 'A';
      for (let i = 0; i < 5; i += 1) {
        expect(
          await errorCode(
            await verify(other, {
              email: 'bob@example.com',
              code: `${wrong}${second.code.slice(1)}`,
            }),
          ),
        ).toBe('400 invalid_token');
      }
      // Five tries spent on every live code for the address: the right ones fail now.
      for (const code of [first.code, second.code]) {
        expect(await errorCode(await verify(other, { email: 'bob@example.com', code }))).toBe(
          '400 invalid_token',
        );
      }
      expect((await accountOf(bob)).emailVerified).toBe(false);
      // The 256-bit link of the same mail is not guessable and holds.
      expect((await verify(other, { token: second.token })).status).toBe(200);
      expect((await accountOf(bob)).emailVerified).toBe(true);

      const cy = await signedIn(service, 'cy@example.com');
      before = smtp.received.length;
      await resend(cy);
      const third = secretsOf(await smtp.mailTo('cy@example.com', before, /Confirm your/));
      const typed = `${third.code.slice(0, 4).toLowerCase()}-${third.code.slice(4)}`;
      expect((await verify(other, { email: ' CY@Example.com', code: typed })).status).toBe(200);
      expect((await accountOf(cy)).emailVerified).toBe(true);
    },
  );

  it.skipIf(skip)(
    'change: mail to the new address → scanner → confirm; the address changes and counts as verified, other sessions end, the old address gets the notice',
    async () => {
      const laptop = await signedIn(service, 'dee@example.com');
      const phone = await signedIn(service, 'dee@example.com');
      // A reset asked before the change: the change voids its link.
      let before = smtp.received.length;
      await post(browser(service), '/api/account/password/forgot', { email: 'dee@example.com' });
      const resetMail = await smtp.mailTo('dee@example.com', before, /Reset your/);
      const resetToken = /reset\?token=([\w-]+)/.exec(resetMail.parsed.text ?? '')?.[1] ?? '';

      // The account's name is its holder's free text: none of it goes to an unproven address.
      const named = await post(laptop, '/api/account/profile', {
        name: 'Dee \u202eSEE-EVIL-EXAMPLE',
      });
      expect(named.status).toBe(200);
      before = smtp.received.length;
      const asked = await change(laptop, 'Dee.New@Example.com');
      expect(asked.status).toBe(202);
      expect(await asked.json()).toEqual({ status: 'accepted' });
      const mail = await smtp.mailTo('dee.new@example.com', before, /Confirm your new address/);
      expect(mail.parsed.text).toMatch(/^Hello,$/m);
      expect(`${mail.parsed.text ?? ''}${String(mail.parsed.html)}`).not.toContain('EVIL-EXAMPLE');
      await scanEveryLink(smtp);
      const { token } = secretsOf(mail);
      // Nothing changed before the button.
      expect((await accountOf(laptop)).email).toBe('dee@example.com');
      before = smtp.received.length;
      const done = await verify(laptop, { token });
      expect(done.status).toBe(200);
      expect(await done.json()).toEqual({ status: 'verified' });
      expect(await accountOf(laptop)).toMatchObject({
        email: 'dee.new@example.com',
        emailVerified: true,
      });
      expect(await phone.session()).toBeNull();
      expect(await errorCode(await verify(laptop, { token }))).toBe('400 invalid_token');

      const notice = await smtp.mailTo('dee@example.com', before, /address of your .* was changed/);
      expect(notice.parsed.text).toContain('to dee.new@example.com');
      expect(notice.parsed.text).toMatch(/\/account\/lock\?token=[\w-]+/);
      expect(
        smtp.received.slice(before).some((m) => m.envelopeTo.includes('dee.new@example.com')),
      ).toBe(false);

      const oldAddress = browser(service);
      await oldAddress.signIn('dee@example.com', password);
      expect(oldAddress.sessionCookie()).toBeUndefined();
      await signedIn(service, 'dee.new@example.com');
      const reset = await post(browser(service), '/api/account/password/reset', {
        token: resetToken,
        password: 'a brand new and long passphrase',
      });
      expect(await errorCode(reset)).toBe('400 invalid_token');

      const events = (await (await laptop.get('/api/account/events')).json()) as {
        events: { type: string }[];
      };
      expect(events.events.map((e) => e.type)).toContain('email_changed');
      const shown = await service.cli(['users', 'list']);
      expect(shown.stdout).toContain('dee.new@example.com');
    },
    60_000,
  );

  it.skipIf(skip)(
    "the change notice's lock link locks the account, after a scanner opened it",
    async () => {
      const intruder = await signedIn(service, 'eve@example.com');
      const owner = await signedIn(service, 'eve@example.com');
      let before = smtp.received.length;
      await change(intruder, 'eve.stolen@example.com');
      const { token } = secretsOf(
        await smtp.mailTo('eve.stolen@example.com', before, /Confirm your new/),
      );
      before = smtp.received.length;
      expect((await verify(intruder, { token })).status).toBe(200);
      const notice = await smtp.mailTo('eve@example.com', before, /was changed/);
      await scanEveryLink(smtp);
      expect(await owner.session()).toBeNull();
      const lockToken = /\/account\/lock\?token=([\w-]+)/.exec(notice.parsed.text ?? '')?.[1] ?? '';
      const locked = await post(browser(service), '/api/account/lock', { token: lockToken });
      expect(locked.status).toBe(200);
      expect(await locked.json()).toEqual({ status: 'locked' });
      expect(await intruder.session()).toBeNull();
      const again = browser(service);
      await again.signIn('eve.stolen@example.com', password);
      expect(again.sessionCookie()).toBeUndefined();
    },
    60_000,
  );

  it.skipIf(skip)(
    "change by code: the person types the new address; the old one's code path finds nothing",
    async () => {
      const fay = await signedIn(service, 'fay@example.com');
      const before = smtp.received.length;
      await change(fay, 'fay.new@example.com');
      const { code } = secretsOf(await smtp.mailTo('fay.new@example.com', before, /Confirm your/));
      const other = browser(service);
      expect(await errorCode(await verify(other, { email: 'fay@example.com', code }))).toBe(
        '400 invalid_token',
      );
      const done = await verify(other, { email: 'fay.new@example.com', code });
      expect(done.status).toBe(200);
      // Confirmed from a device without the user's session: every session ended.
      expect(await fay.session()).toBeNull();
      const now = await signedIn(service, 'fay.new@example.com');
      expect(await accountOf(now)).toMatchObject({
        email: 'fay.new@example.com',
        emailVerified: true,
      });
    },
  );

  it.skipIf(skip)(
    'a taken address answers the same bytes as a free one and gets no mail; bad input is 422',
    async () => {
      const gus = await signedIn(service, 'gus@example.com');
      const before = smtp.received.length;
      const taken = await bytesOf(await change(gus, 'hal@example.com'));
      const free = await bytesOf(await change(gus, 'gus.free@example.com'));
      expect(taken).toBe(free);
      expect(free).toContain('202');
      await smtp.mailTo('gus.free@example.com', before, /Confirm your new/);
      await sleep(500);
      expect(
        smtp.received.slice(before).some((m) => m.envelopeTo.includes('hal@example.com')),
      ).toBe(false);
      expect(await errorCode(await change(gus, 'not an address'))).toBe('422 invalid_field');
      const same = await change(gus, 'GUS@example.com');
      expect(same.status).toBe(422);
      expect(await same.json()).toEqual({
        error: {
          code: 'invalid_field',
          message: 'That is already the address of your account.',
        },
      });
      // Signed out: 401.
      expect(await errorCode(await change(browser(service), 'x@example.com'))).toBe(
        '401 unauthenticated',
      );
      expect(await errorCode(await resend(browser(service)))).toBe('401 unauthenticated');
    },
  );

  it.skipIf(skip)(
    'an address taken between the mail and the button: invalid_token saying so, nothing changed',
    async () => {
      const ivy = await signedIn(service, 'ivy@example.com');
      const jo = await signedIn(service, 'jo@example.com');
      let before = smtp.received.length;
      await change(ivy, 'shared@example.com');
      const ivyMail = await smtp.mailTo('shared@example.com', before, /Confirm your new/);
      before = smtp.received.length;
      await change(jo, 'shared@example.com');
      const joMail = await smtp.mailTo('shared@example.com', before, /Confirm your new/);
      expect((await verify(jo, { token: secretsOf(joMail).token })).status).toBe(200);
      const late = await verify(ivy, { token: secretsOf(ivyMail).token });
      expect(late.status).toBe(400);
      expect(await late.json()).toEqual({
        error: {
          code: 'invalid_token',
          message: 'That address belongs to another account now, so your address was not changed.',
        },
      });
      expect((await accountOf(ivy)).email).toBe('ivy@example.com');
      expect(await ivy.session()).not.toBeNull();
    },
  );

  it.skipIf(skip)('a password change after the change mail voids its link', async () => {
    const hal = await signedIn(service, 'hal@example.com');
    const before = smtp.received.length;
    await change(hal, 'hal.new@example.com');
    const { token } = secretsOf(await smtp.mailTo('hal.new@example.com', before, /Confirm your/));
    const changed = await post(hal, '/api/account/password/change', {
      currentPassword: password,
      newPassword: 'another long and fine passphrase',
    });
    expect(changed.status).toBe(200);
    expect(await errorCode(await verify(hal, { token }))).toBe('400 invalid_token');
    expect((await accountOf(hal)).email).toBe('hal@example.com');
  });

  it.skipIf(skip)('without a CSRF token the three routes answer 403 csrf', async () => {
    for (const path of [
      '/api/account/email/verify',
      '/api/account/email/verification',
      '/api/account/email/change',
    ]) {
      const response = await fetch(`${service.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: 'x', email: 'a@example.com' }),
      });
      expect(await errorCode(response)).toBe('403 csrf');
    }
  });
});

describe('limits, expiry and recent sign-in (SQLite)', () => {
  const reauthMaxAgeSeconds = 5;
  let mailed: MailService;
  let service: AccountService;
  let smtp: MailService['smtp'];

  beforeAll(async () => {
    mailed = await startMailService({
      users: ['kim', 'lee', 'max'].map((name) => `${name}@example.com`),
      password,
      // A re-authentication holds 5 s: long enough that the request after it cannot be
      // overtaken by the window on a loaded machine, short enough to wait out once.
      env: { MAIL_TOKEN_TTL: '1', REAUTH_MAX_AGE: String(reauthMaxAgeSeconds) },
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it('after MAIL_TOKEN_TTL the link and the code are 400 invalid_token', async () => {
    const kim = await signedIn(service, 'kim@example.com');
    let before = smtp.received.length;
    await resend(kim);
    const verifyMail = secretsOf(await smtp.mailTo('kim@example.com', before, /Confirm your/));
    before = smtp.received.length;
    // A change needs a recent proof: the sign-in's may have run out while the mail came.
    expect((await post(kim, '/api/account/reauthenticate', { password })).status).toBe(200);
    await change(kim, 'kim.new@example.com');
    const changeMail = secretsOf(await smtp.mailTo('kim.new@example.com', before, /Confirm/));
    await sleep(1_200);
    for (const secret of [
      { token: verifyMail.token },
      { email: 'kim@example.com', code: verifyMail.code },
      { token: changeMail.token },
      { email: 'kim.new@example.com', code: changeMail.code },
    ]) {
      expect(await errorCode(await verify(browser(service), secret))).toBe('400 invalid_token');
    }
    expect(await accountOf(kim)).toMatchObject({ email: 'kim@example.com', emailVerified: false });
  });

  it('asking for mail is limited: 429 with Retry-After', async () => {
    const lee = await signedIn(service, 'lee@example.com');
    let refused: Response | undefined;
    for (let i = 0; i < 12 && refused === undefined; i += 1) {
      const response = await resend(lee);
      if (response.status === 429) refused = response;
      else expect(response.status).toBe(202);
    }
    expect(refused?.status).toBe(429);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a change needs a recent sign-in: 401 reauthentication_required, then fine after it', async () => {
    const max = await signedIn(service, 'max@example.com');
    await sleep(reauthMaxAgeSeconds * 1000 + 100);
    expect(await errorCode(await change(max, 'max.new@example.com'))).toBe(
      '401 reauthentication_required',
    );
    expect((await post(max, '/api/account/reauthenticate', { password })).status).toBe(200);
    expect((await change(max, 'max.new@example.com')).status).toBe(202);
  });
});

describe('production without SMTP_URL', () => {
  it('the three routes and the link page answer 404', async () => {
    const { service, close } = await startService({ env: productionWithoutMail });
    try {
      for (const path of [
        '/api/account/email/verify',
        '/api/account/email/verification',
        '/api/account/email/change',
      ]) {
        const response = await fetch(`${service.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: 'x' }),
        });
        expect(await errorCode(response)).toBe('404 not_found');
      }
      expect((await fetch(`${service.url}/account/email/verify?token=x`)).status).toBe(404);
    } finally {
      await close();
    }
  }, 60_000);
});
