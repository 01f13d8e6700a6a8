import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { hasPostgres } from '../helpers/postgres.js';
import { firstPass } from '../helpers/passes.js';
import { startMailService, type MailService } from './account-service.js';

/*
 * What a stranger can spend, and what the owner can always still do (docs/behaviour.md,
 * "Mail budgets"): each purpose has budgets of its own, a client's requests are charged to that
 * client's share of an address, and a mail is charged to the address only when it is sent. The
 * sign-in's refusals, which anyone can cause, are recorded once per account and window. Built
 * service, a real SMTP server on loopback, SQLite and PostgreSQL (the counters live in the store).
 */

const password = 'correct horse battery staple';
const newPassword = 'a new and longer passphrase';
const emailMax = 3;

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: !firstPass },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !firstPass || !hasPostgres },
];

describe.each(backends)('mail budgets on $name', ({ backend, skip }) => {
  let mailed: MailService;
  let url: string;

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend,
      users: ['owner@example.com', 'stranger@example.com', 'flooded@example.com', 'ev@example.com'],
      password,
      env: {
        SIGNUP: 'open',
        TRUST_PROXY: '127.0.0.1',
        THROTTLE_EMAIL_MAX_FAILURES: String(emailMax),
        MAIL_RETRY_SECONDS: '1',
        // Shorter than the budgets' window (THROTTLE_WINDOW_SECONDS, 900): a sign-up's link must
        // still outlast a spent budget.
        MAIL_TOKEN_TTL: '120',
      },
    });
    url = mailed.service.url;
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  const at = (ip: string) => new Client(url, { 'x-forwarded-for': ip });
  const post = async (client: Client, path: string, body: Record<string, unknown>) => {
    const csrfToken = await client.csrfToken();
    return client.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ csrfToken, ...body }),
    });
  };
  const mailsTo = (to: string, subject: RegExp) =>
    mailed.smtp.received.filter(
      (m) => m.envelopeTo.includes(to) && subject.test(m.parsed.subject ?? ''),
    );
  /** Past the after-answer queue's tick and the worker's delivery. */
  const settle = () => sleep(1_500);
  // Mail the limits let through is polled for first (the outbox sends it after the answers, and
  // a loaded machine may take seconds); `settle` then gives one more the time to come, were
  // there one.
  const sending = { timeout: 20_000 };

  it.skipIf(skip)(
    'a stranger spends only their own share: the owner’s reset and resend still answer and mail',
    async () => {
      const stranger = at('203.0.113.9');
      expect((await stranger.signIn('stranger@example.com', password)).status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i <= emailMax; i += 1) {
        // An address change to a taken address sends nothing; a sign-up for it sends its owner
        // "you already have an account".
        statuses.push(
          (await post(stranger, '/api/account/email/change', { email: 'owner@example.com' }))
            .status,
        );
        statuses.push(
          (
            await post(at('203.0.113.9'), '/api/account/signup', {
              email: 'owner@example.com',
              name: 'Mallory',
              password: 'mallory chose this password',
            })
          ).status,
        );
      }
      // The stranger's own share ends: 429 for them.
      expect(statuses.slice(0, -2).every((status) => status === 202)).toBe(true);
      expect(statuses.slice(-2)).toEqual([429, 429]);

      const owner = at('198.51.100.7');
      const before = mailsTo('owner@example.com', /Reset your/).length;
      expect(
        (await post(owner, '/api/account/password/forgot', { email: 'owner@example.com' })).status,
      ).toBe(202);
      await expect
        .poll(() => mailsTo('owner@example.com', /Reset your/).length, sending)
        .toBeGreaterThanOrEqual(before + 1);
      await settle();
      expect(mailsTo('owner@example.com', /Reset your/).length).toBe(before + 1);
      expect((await owner.signIn('owner@example.com', password)).status).toBe(200);
      const resent = await post(owner, '/api/account/email/verification', {});
      expect(resent.status).toBe(202);
    },
    60_000,
  );

  it.skipIf(skip)(
    'many clients cannot flood one mailbox; the links already sent stay usable for the owner',
    async () => {
      for (let i = 1; i <= emailMax + 2; i += 1) {
        const asked = await post(at(`192.0.2.${i}`), '/api/account/password/forgot', {
          email: 'flooded@example.com',
        });
        expect(asked.status).toBe(202);
      }
      await expect
        .poll(() => mailsTo('flooded@example.com', /Reset your/).length, sending)
        .toBeGreaterThanOrEqual(emailMax);
      await settle();
      const sent = mailsTo('flooded@example.com', /Reset your/);
      expect(sent).toHaveLength(emailMax);
      // The owner's own request answers as ever; no further mail is sent in the window.
      const owner = at('198.51.100.20');
      expect(
        (await post(owner, '/api/account/password/forgot', { email: 'flooded@example.com' }))
          .status,
      ).toBe(202);
      await settle();
      expect(mailsTo('flooded@example.com', /Reset your/)).toHaveLength(emailMax);
      // But every link already in the mailbox works.
      const token = /reset\?token=([\w-]+)/.exec(sent[0]?.parsed.text ?? '')?.[1] ?? '';
      const reset = await post(owner, '/api/account/password/reset', {
        token,
        password: newPassword,
      });
      expect(reset.status).toBe(200);
      expect((await owner.signIn('flooded@example.com', newPassword)).status).toBe(200);
    },
    60_000,
  );

  it.skipIf(skip)(
    'a stranger’s sign-ups spend a fresh address’s sign-up mails; its owner still finishes their own sign-up, with a password of their choosing',
    async () => {
      const email = 'fresh-owner@example.com';
      const mallory = { email, name: 'Mallory', password: 'mallory chose this password' };
      // From enough addresses that no client's own share stops them: the sent budget does.
      for (let i = 1; i <= emailMax + 2; i += 1) {
        const asked = await post(at(`203.0.113.${100 + i}`), '/api/account/signup', mallory);
        expect(asked.status).toBe(202);
      }
      await expect
        .poll(() => mailsTo(email, /Confirm your address/).length, sending)
        .toBeGreaterThanOrEqual(emailMax);
      await settle();
      const sent = mailsTo(email, /Confirm your address/);
      expect(sent).toHaveLength(emailMax);
      // The owner's own sign-up answers as ever, and no further mail goes out (the bound).
      const owner = at('198.51.100.60');
      const ownPassword = 'the owner’s very own passphrase';
      const own = { email, name: 'Owner', password: ownPassword };
      expect((await post(owner, '/api/account/signup', own)).status).toBe(202);
      await settle();
      expect(mailsTo(email, /Confirm your address/)).toHaveLength(emailMax);
      expect(mailed.service.output()).toContain('"reason":"address_budget"');
      // Every link in the mailbox serves its owner: the newest makes their account, with the
      // name and password they choose now.
      const newest = sent.at(-1)?.parsed.text ?? '';
      const token = /signup\/confirm\?token=([\w-]+)/.exec(newest)?.[1] ?? '';
      const confirmed = await post(owner, '/api/account/email/verify', {
        token,
        name: 'Owner',
        password: ownPassword,
      });
      expect(confirmed.status).toBe(200);
      // Its link lives as long as a spent budget stays spent, not MAIL_TOKEN_TTL's 2 minutes.
      expect(newest).toContain('The link expires in 15 minutes.');
      expect(newest).not.toContain('Mallory');
      expect((await owner.signIn(email, ownPassword)).status).toBe(200);
      const theirs = await at('203.0.113.99').signIn(email, mallory.password);
      expect(new URL(((await theirs.json()) as { url: string }).url).searchParams.get('code')).toBe(
        'credentials',
      );
      // The other links are void now that the address has an account.
      const older = /signup\/confirm\?token=([\w-]+)/.exec(sent[0]?.parsed.text ?? '')?.[1];
      const late = await post(owner, '/api/account/email/verify', {
        token: older,
        password: mallory.password,
      });
      expect(late.status).toBe(400);
    },
    60_000,
  );

  it.skipIf(skip)(
    'without AUTH_URL, mailed links never follow a Host header that is not this machine',
    async () => {
      const browser = at('198.51.100.40');
      const csrfToken = await browser.csrfToken();
      const body = JSON.stringify({ csrfToken, email: 'ev@example.com' });
      const { port } = new URL(url);
      // fetch does not let a caller choose Host; a client on the network can.
      const status = await new Promise<number>((resolve, reject) => {
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/account/password/forgot',
            headers: {
              host: `evil.example:${port}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              cookie: browser.cookieHeader(),
              'x-forwarded-for': '198.51.100.40',
            },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        request.end(body);
      });
      expect(status).toBe(202);
      const mail = await mailed.smtp.mailTo('ev@example.com', 0, /Reset your/);
      expect(mail.parsed.text).toContain(`http://localhost:${port}/account/password/reset?token=`);
      expect(mail.parsed.text).not.toContain('evil.example');
      expect(mailed.service.output()).toContain('"setting":"AUTH_URL"');
    },
    60_000,
  );

  it.skipIf(skip)(
    'a stranger’s refused sign-ins are recorded once a window, and never push out the owner’s own',
    async () => {
      const owner = at('198.51.100.30');
      expect((await owner.signIn('ev@example.com', password)).status).toBe(200);
      const stranger = at('203.0.113.50');
      for (let i = 0; i < 30; i += 1) await stranger.signIn('ev@example.com', 'not the password');
      const listEvents = async () => {
        const listed = await owner.request('/api/account/events');
        expect(listed.status).toBe(200);
        return ((await listed.json()) as { events: { type: string }[] }).events;
      };
      // Each is recorded just after its answer: polled for, then time for more, were there any.
      await expect
        .poll(async () => (await listEvents()).map((event) => event.type), sending)
        .toEqual(expect.arrayContaining(['signin', 'signin_failed', 'throttled']));
      await settle();
      const events = await listEvents();
      const count = (type: string) => events.filter((event) => event.type === type).length;
      expect(count('signin')).toBe(1);
      expect(count('signin_failed')).toBe(1);
      expect(count('throttled')).toBe(1);
    },
    60_000,
  );
});
