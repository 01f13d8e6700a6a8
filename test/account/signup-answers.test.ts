import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { Client } from '../helpers/client.js';
import type { SmtpMode } from '../helpers/smtp.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';
import { equalAnswers } from './equal-answers.js';

/*
 * What open sign-up gives away: nothing. The same bytes and, by the sign-in's own statistical
 * test (as password-reset-answers.test.ts: interleaved pairs in random order, only the POST
 * timed, medians compared, within 10 %), the same time for a new and a taken address, with SMTP
 * up and down. Each "new" sample is an address never seen before, so it really writes a pending
 * sign-up and its mail. Built service, SQLite.
 *
 * What the timing half can catch: a wait on the account's fate in the answer that costs more
 * than a tenth of it. The argon2 hash that every sign-up pays before the answer (the same for
 * every address) is most of the answer's time, so a few database writes moved into it would hide
 * in the noise: the equal time rests on the design (that work runs after the answer is sent),
 * and the bytes are checked exactly. The timing half runs once, with fast paths on: they change
 * how sessions are read, and sign-up reads none.
 */

const password = 'correct horse battery staple';
const timingSamples = 100;
const timed = process.env.GATEHOUSE_TEST_FAST_PATHS !== 'off';

describe('sign-up: the same answer and time for new and taken addresses', () => {
  let mailed: MailService;
  let service: AccountService;
  let smtp: MailService['smtp'];
  let fresh = 0;
  let dataDir = '';

  beforeAll(async () => {
    mailed = await startMailService({
      users: ['taken@example.com'],
      password,
      env: {
        MAIL_RETRY_SECONDS: '1',
        SIGNUP: 'open',
        // Hundreds of requests from one address for one account: the limits are not under test.
        THROTTLE_EMAIL_MAX_FAILURES: '100000',
        THROTTLE_IP_MAX_FAILURES: '100000',
      },
    });
    ({ service, smtp } = mailed);
    dataDir = mailed.databaseEnv.DATA_DIR ?? '';
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it.each<SmtpMode>(['up', 'down'])(
    'SMTP %s: new and taken get the same bytes, and the same time within noise',
    async (mode) => {
      await smtp.setMode(mode);
      const browser = new Client(service.url, { 'user-agent': 'TimingTest/1.0' });
      const csrfToken = await browser.csrfToken();
      let newAddresses = 0;
      const signUp = (email: string) =>
        browser.request('/api/account/signup', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ csrfToken, email, name: 'Timing Person', password }),
        });
      // A real difference here is the account's work in the answer.
      const { bytes, within } = await equalAnswers({
        label: `sign-up timing, SMTP ${mode}`,
        baseline: 'new',
        compared: 'taken',
        request: {
          new: () => {
            fresh += 1;
            newAddresses += 1;
            return signUp(`new-${mode}-${fresh}@example.com`);
          },
          taken: () => signUp('taken@example.com'),
        },
        samples: timingSamples,
        timed,
      });
      expect(bytes.new.size).toBe(1);
      expect([...bytes.taken]).toEqual([...bytes.new]);
      expect([...bytes.new][0]).toContain('202');
      expect(within).toBe(true);
      // Every new address did become a pending sign-up (the work after the answer was done, or
      // is finishing), and none an account before its confirmation: counted in the database file.
      const { db } = openDatabase(`file:${dataDir}/gatehouse.db`);
      const pending = async () =>
        Number(
          (
            await db
              .selectFrom('account_tokens')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('purpose', '=', 'signup')
              .where('email', 'like', `new-${mode}-%`)
              .executeTakeFirstOrThrow()
          ).n,
        );
      await expect.poll(pending, { timeout: 10_000 }).toBe(newAddresses);
      const accounts = await db
        .selectFrom('users')
        .select('email')
        .where('email', 'like', `new-${mode}-%`)
        .execute();
      expect(accounts).toEqual([]);
      await db.destroy();
    },
    300_000,
  );
});
