import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import type { LoopbackSmtp, SmtpMode } from '../helpers/smtp.js';
import {
  productionWithoutMail,
  startMailService,
  startService,
  type AccountService,
  type MailService,
} from './account-service.js';
import { equalAnswers } from './equal-answers.js';

/*
 * What "forgot password" gives away: nothing. The same bytes and, by the sign-in's own
 * statistical test (scripts/bench/refusal-timing.ts: interleaved pairs in random order, only
 * the POST timed, medians compared), the same time for a known and an unknown address, with
 * SMTP up, down and stalled. Then expiry, production without SMTP (404) and development
 * without SMTP (held, link in the log and in `gatehouse mail show`). Built service, SQLite.
 */

const password = 'correct horse battery staple';
const timingSamples = 300;

async function forgot(client: Client, csrfToken: string, email: string) {
  return client.request('/api/account/password/forgot', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ csrfToken, email }),
  });
}

describe('forgot: the same answer and time for known and unknown addresses', () => {
  let service: AccountService;
  let smtp: LoopbackSmtp;
  let mailed: MailService | undefined;
  const client = () => new Client(service.url, { 'user-agent': 'TimingTest/1.0' });

  beforeAll(async () => {
    mailed = await startMailService({
      env: {
        MAIL_RETRY_SECONDS: '1',
        // Hundreds of requests from one address for one account: the limits are not under test.
        THROTTLE_EMAIL_MAX_FAILURES: '100000',
        THROTTLE_IP_MAX_FAILURES: '100000',
      },
      users: ['known@example.com'],
      password,
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(() => mailed?.close());

  it.each<SmtpMode>(['up', 'down', 'stalled'])(
    'SMTP %s: known and unknown get the same bytes, and the same time within noise',
    async (mode) => {
      await smtp.setMode(mode);
      const browser = client();
      const csrf = await browser.csrfToken();
      // A real difference here is the account's work in the answer (a transaction and an
      // outbox row): it measured +20 to +30 %, several times the 10 % bound.
      const { bytes, within } = await equalAnswers({
        label: `forgot timing, SMTP ${mode}`,
        baseline: 'unknown',
        compared: 'known',
        request: {
          known: () => forgot(browser, csrf, 'known@example.com'),
          unknown: () => forgot(browser, csrf, 'unknown@example.com'),
        },
        samples: timingSamples,
      });
      expect(bytes.known.size).toBe(1);
      expect([...bytes.unknown]).toEqual([...bytes.known]);
      expect([...bytes.known][0]).toContain('202');
      expect(within).toBe(true);
    },
    120_000,
  );

  it("the next request on the connection waits alike: the account's work is not on its heels", async () => {
    await smtp.setMode('up');
    const browser = client();
    const csrf = await browser.csrfToken();
    // A real difference here is the lookup, the secret and the outbox row run right after the
    // answer, on the same process: it measured 4.2 vs 2.4 ms median (+75 %).
    const { within } = await equalAnswers({
      label: 'the request after a forgot',
      baseline: 'unknown',
      compared: 'known',
      before: {
        known: () => forgot(browser, csrf, 'known@example.com'),
        unknown: () => forgot(browser, csrf, 'unknown@example.com'),
      },
      request: {
        known: () => browser.request('/api/auth/csrf'),
        unknown: () => browser.request('/api/auth/csrf'),
      },
      samples: timingSamples,
    });
    expect(within).toBe(true);
  }, 120_000);
});

describe('reset links expire', () => {
  it('after MAIL_TOKEN_TTL the link and the code are 400 invalid_token', async () => {
    const { service, smtp, close } = await startMailService({
      env: { MAIL_TOKEN_TTL: '1' },
      users: ['late@example.com'],
      password,
    });
    try {
      const browser = new Client(service.url);
      const csrfToken = await browser.csrfToken();
      expect((await forgot(browser, csrfToken, 'late@example.com')).status).toBe(202);
      const [mail] = await smtp.waitFor(1);
      const text = mail?.parsed.text ?? '';
      expect(text).toMatch(/expires in 0 minutes|expires in \d+ minutes/);
      const token = /reset\?token=([\w-]+)/.exec(text)?.[1] ?? '';
      const code = /enter this code on the page: ([A-Z0-9]+)/.exec(text)?.[1] ?? '';
      await sleep(1_200);
      for (const secret of [{ token }, { email: 'late@example.com', code }]) {
        const response = await browser.request('/api/account/password/reset', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            csrfToken,
            ...secret,
            password: 'a brand new and long passphrase',
          }),
        });
        expect(response.status).toBe(400);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
          'invalid_token',
        );
      }
    } finally {
      await close();
    }
  }, 60_000);
});

describe('without SMTP_URL', () => {
  it('production: both routes answer 404', async () => {
    const { service, close } = await startService({ env: productionWithoutMail });
    try {
      for (const path of ['/api/account/password/forgot', '/api/account/password/reset']) {
        const response = await fetch(`${service.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'a@example.com' }),
        });
        expect(response.status).toBe(404);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
          'not_found',
        );
      }
    } finally {
      await close();
    }
  }, 60_000);

  it('development: the mail is held, its link logged and shown by `gatehouse mail show`', async () => {
    const { service, close } = await startService();
    try {
      await service.addUser('dev@example.com', password);
      const browser = new Client(service.url);
      const csrfToken = await browser.csrfToken();
      expect((await forgot(browser, csrfToken, 'dev@example.com')).status).toBe(202);
      let listed: { id: string; state: string }[] = [];
      for (let i = 0; i < 100 && listed.length === 0; i += 1) {
        await sleep(50);
        listed = JSON.parse(
          (await service.cli(['mail', 'list', '--json'])).stdout,
        ) as typeof listed;
      }
      expect(listed).toEqual([expect.objectContaining({ state: 'held' })]);
      const shown = await service.cli(['mail', 'show', listed[0]?.id ?? '']);
      const link = /http:\/\/127\.0\.0\.1:\d+\/account\/password\/reset\?token=[\w-]+/.exec(
        shown.stdout,
      )?.[0];
      expect(link).toBeDefined();
      expect(service.output()).toContain(link);
    } finally {
      await close();
    }
  }, 60_000);
});
