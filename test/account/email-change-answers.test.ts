import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import type { SmtpMode } from '../helpers/smtp.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';
import { equalAnswers } from './equal-answers.js';

/*
 * What "change e-mail" gives away about the new address: nothing. A signed-in user asking to
 * move to an address another account holds gets the same bytes and, by the sign-in's own
 * statistical test (interleaved pairs in random order, only the POST timed, medians compared),
 * the same time as for a free address, with SMTP up and down. Built service, SQLite.
 */

const password = 'correct horse battery staple';
const timingSamples = 200;

describe('change e-mail: the same answer and time for a taken and a free address', () => {
  let mailed: MailService;
  let service: AccountService;
  let smtp: MailService['smtp'];

  beforeAll(async () => {
    mailed = await startMailService({
      users: ['mover@example.com', 'holder@example.com'],
      password,
      env: {
        MAIL_RETRY_SECONDS: '1',
        // Hundreds of requests from one address: the limits are not under test.
        THROTTLE_EMAIL_MAX_FAILURES: '100000',
        THROTTLE_IP_MAX_FAILURES: '100000',
      },
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it.each<SmtpMode>(['up', 'down'])(
    'SMTP %s: taken and free get the same bytes, and the same time within noise',
    async (mode) => {
      await smtp.setMode(mode);
      const mover = new Client(service.url, { 'user-agent': 'TimingTest/1.0' });
      await mover.signIn('mover@example.com', password);
      const csrfToken = await mover.csrfToken();
      const change = (email: string) => () =>
        mover.request('/api/account/email/change', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ csrfToken, email }),
        });
      // A real difference here is the lookup and the outbox write inside the answer.
      const { bytes, within } = await equalAnswers({
        label: `change e-mail timing, SMTP ${mode}`,
        baseline: 'free',
        compared: 'taken',
        request: { taken: change('holder@example.com'), free: change('free@example.com') },
        samples: timingSamples,
      });
      expect(bytes.taken.size).toBe(1);
      expect([...bytes.free]).toEqual([...bytes.taken]);
      expect([...bytes.taken][0]).toContain('202');
      expect(within).toBe(true);
      // The holder of the taken address was never mailed.
      expect(smtp.received.some((m) => m.envelopeTo.includes('holder@example.com'))).toBe(false);
    },
    120_000,
  );
});
