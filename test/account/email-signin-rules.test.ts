import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '../helpers/backends.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';
import {
  askMail,
  auditEntries,
  clientAt,
  mailedSecrets,
  mailsTo,
  pressLinkButton,
  refusalOf,
  sessionEmail,
  typeCode,
} from './email-signin-helpers.js';

/*
 * Who a sign-in mail goes to, and what it does (issue 40 item 2; docs/behaviour.md, "Sign-in by
 * e-mail"): an unknown address hears that no account was found, or with SIGNUP=open gets a
 * link that makes the account when it comes back; a disabled account gets nothing; an address
 * locked by someone else's wrong passwords still signs in by its mail; and the mail budgets a
 * stranger spends never stop the owner. The service in process, a real SMTP server on loopback;
 * SQLite, and PostgreSQL under scripts/with-postgres.sh.
 */

const password = 'correct horse battery staple';
const emailMax = 3;
/** Past the after-answer queue's tick and the worker's delivery. */
const settle = () => sleep(1_500);

interface Listed {
  email: string;
  emailVerified: boolean;
}

async function listed(service: AccountService, email: string): Promise<Listed | undefined> {
  const users = await service.cli(['users', 'list', '--json']);
  expect(users.code).toBe(0);
  return (JSON.parse(users.stdout) as Listed[]).find((user) => user.email === email);
}

const backends = databaseBackends('email-signin-rules');

describe.each(backends)('who a sign-in mail goes to on $name', ({ dialect: backend, skip }) => {
  let mailed: MailService;
  let service: AccountService;

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend,
      users: ['off@example.com', 'locked@example.com', 'owner@example.com'],
      password,
      env: {
        EMAIL_SIGNIN: 'on',
        TRUST_PROXY: '127.0.0.1',
        MAIL_RETRY_SECONDS: '1',
        THROTTLE_EMAIL_MAX_FAILURES: String(emailMax),
        // Shorter than the budgets' window (THROTTLE_WINDOW_SECONDS, 900): a link must still
        // outlast a spent budget.
        MAIL_TOKEN_TTL: '120',
      },
    });
    service = mailed.service;
    expect((await service.cli(['users', 'disable', '--email', 'off@example.com'])).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it.skipIf(skip)(
    'an unknown address (SIGNUP=closed): the same answer, a mail saying no account was found, and no account',
    async () => {
      const asked = await askMail(clientAt(service, '198.51.100.10'), 'nobody@example.com');
      expect(asked.status).toBe(200);
      const mail = await mailed.smtp.mailTo('nobody@example.com', 0);
      expect(mail.parsed.subject).toBe('No Gatehouse account for this address');
      expect(mail.parsed.text).toContain('no account was');
      expect(mail.parsed.text).not.toMatch(/https?:\/\//);
      expect(await listed(service, 'nobody@example.com')).toBeUndefined();
    },
    30_000,
  );

  it.skipIf(skip)('a disabled account: the same answer, and no mail at all', async () => {
    const asked = await askMail(clientAt(service, '198.51.100.11'), 'off@example.com');
    expect(asked.status).toBe(200);
    await settle();
    expect(mailsTo(mailed.smtp, 'off@example.com')).toEqual([]);
  });

  it.skipIf(skip)(
    "an address locked by another client's wrong passwords still signs in by its mail, link or code",
    async () => {
      const guesser = clientAt(service, '203.0.113.20');
      for (let i = 0; i < emailMax; i += 1)
        await guesser.signIn('locked@example.com', `wrong ${i}`);
      const owner = clientAt(service, '198.51.100.12');
      const locked = await owner.signIn('locked@example.com', password);
      expect(await refusalOf(locked)).toBe('CredentialsSignin rate_limited');
      let since = mailed.smtp.received.length;
      expect((await askMail(owner, 'locked@example.com')).status).toBe(200);
      const first = await mailedSecrets(mailed.smtp, 'locked@example.com', since);
      expect((await pressLinkButton(owner, first.link)).status).toBe(200);
      expect(await sessionEmail(owner)).toBe('locked@example.com');
      since = mailed.smtp.received.length;
      const laptop = clientAt(service, '198.51.100.13');
      await askMail(laptop, 'locked@example.com');
      const second = await mailedSecrets(mailed.smtp, 'locked@example.com', since);
      expect((await typeCode(laptop, 'locked@example.com', second.code)).status).toBe(200);
      expect(await sessionEmail(laptop)).toBe('locked@example.com');
      // The lock still holds for the guesser's password.
      expect(await refusalOf(await guesser.signIn('locked@example.com', password))).toBe(
        'CredentialsSignin rate_limited',
      );
    },
    30_000,
  );

  it.skipIf(skip)(
    'mail budgets spent by a stranger never stop the owner: a 429 only for the stranger, and the links they had sent sign the owner in',
    async () => {
      const stranger = clientAt(service, '203.0.113.30');
      const statuses: number[] = [];
      for (let i = 0; i <= emailMax; i += 1)
        statuses.push((await askMail(stranger, 'owner@example.com')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const limited = await askMail(stranger, 'owner@example.com');
      expect(limited.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(await refusalOf(limited)).toBe('EmailSignInError rate_limited');
      // The ones sent (polled: the outbox sends them after the answers), then long enough for
      // one more to come, were there one.
      await expect
        .poll(() => mailsTo(mailed.smtp, 'owner@example.com').length, { timeout: 20_000 })
        .toBeGreaterThanOrEqual(emailMax);
      await settle();
      const sent = mailsTo(mailed.smtp, 'owner@example.com');
      expect(sent).toHaveLength(emailMax);
      // The owner's own request is answered as ever; the address's sent budget is spent, so no
      // fourth mail goes to it.
      const owner = clientAt(service, '198.51.100.14');
      expect((await askMail(owner, 'owner@example.com')).status).toBe(200);
      await settle();
      expect(mailsTo(mailed.smtp, 'owner@example.com')).toHaveLength(emailMax);
      // But any of the stranger's mails serves the owner: its link is bound to no browser.
      const since = mailed.smtp.received.indexOf(sent[0]!);
      const { link, code } = await mailedSecrets(mailed.smtp, 'owner@example.com', since);
      expect(await refusalOf(await typeCode(owner, 'owner@example.com', code))).toBe(
        'CredentialsSignin email_code_invalid',
      );
      expect((await pressLinkButton(owner, link)).status).toBe(200);
      expect(await sessionEmail(owner)).toBe('owner@example.com');
    },
    30_000,
  );
});

describe.each(backends)(
  'SIGNUP=open and sign-in by e-mail on $name',
  ({ dialect: backend, skip }) => {
    let mailed: MailService;
    let service: AccountService;

    beforeAll(async () => {
      if (skip) return;
      mailed = await startMailService({
        backend,
        env: {
          EMAIL_SIGNIN: 'on',
          SIGNUP: 'open',
          TRUST_PROXY: '127.0.0.1',
          MAIL_RETRY_SECONDS: '1',
        },
      });
      service = mailed.service;
    }, 60_000);
    afterAll(async () => {
      await mailed?.close();
    });

    it.skipIf(skip)(
      'an unknown address gets an account only when its link comes back: verified, without a password, recorded as made by e-mail',
      async () => {
        const asking = clientAt(service, '198.51.100.20');
        expect((await askMail(asking, 'New@Example.com')).status).toBe(200);
        const { mail, link } = await mailedSecrets(mailed.smtp, 'new@example.com', 0);
        expect(mail.parsed.subject).toBe('Create your Gatehouse account');
        expect(mail.parsed.text).toMatch(/^Hello,$/m);
        expect(await listed(service, 'new@example.com')).toBeUndefined();
        expect((await pressLinkButton(clientAt(service, '198.51.100.21'), link)).status).toBe(200);
        expect(await listed(service, 'new@example.com')).toEqual(
          expect.objectContaining({ emailVerified: true }),
        );
        const made = await auditEntries(service, 'account_created');
        expect(made).toEqual([expect.objectContaining({ detail: { via: 'email' } })]);
        // No password was ever chosen: none signs in.
        expect(await refusalOf(await asking.signIn('new@example.com', password))).toBe(
          'CredentialsSignin credentials',
        );
      },
      30_000,
    );

    it.skipIf(skip)('the code makes the account too, in the browser that asked', async () => {
      const asking = clientAt(service, '198.51.100.22');
      await askMail(asking, 'coder@example.com');
      const { code } = await mailedSecrets(mailed.smtp, 'coder@example.com', 0);
      expect((await typeCode(asking, 'coder@example.com', code)).status).toBe(200);
      expect(await sessionEmail(asking)).toBe('coder@example.com');
    });
  },
);
