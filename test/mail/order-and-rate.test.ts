import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailService, type MailService } from '../account/account-service.js';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { hasPostgres } from '../helpers/postgres.js';

/*
 * Security mail first, and a cap on the sending rate (issue 25 item 2), black-box: the
 * service in process mailing a real SMTP server on loopback that answers each
 * message's end slowly, as a relay taking a few mails a second does. Sign-ups to fresh
 * addresses queue faster than it takes them; a reset asked for after them arrives before those
 * still waiting. SQLite, and PostgreSQL under scripts/with-postgres.sh (the claim's order is
 * one statement per backend).
 */

const password = 'correct horse battery staple';
const signupPassword = 'a passphrase for the new account';

const signUp = (client: Client, email: string) =>
  postWithCsrf(client, '/api/account/signup', {
    email,
    name: 'New Person',
    password: signupPassword,
  });

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
];

// The mail worker's order and pace: no fast path is on its way (helpers/passes.ts).
describe.skipIf(!firstPass).each(backends)('security mail first on $name', ({ backend, skip }) => {
  let mailed: MailService | undefined;

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend,
      smtpMode: 'slow',
      env: { SIGNUP: 'open' },
      users: ['ada@example.com'],
      password,
    });
  }, 60_000);
  afterAll(() => mailed?.close());

  it.skipIf(skip)(
    'a reset asked for behind a queue of sign-up mails is sent before the sign-ups still waiting',
    async () => {
      const { service, smtp } = mailed as MailService;
      // Each message's end is answered after 2.5 s: two connections take a mail every 1.25 s,
      // so a loaded machine's slower queueing of the reset is not overtaken by another slot.
      smtp.slowMs = 2_500;
      const client = new Client(service.url);
      const signups = Array.from({ length: 10 }, (_, i) => `fresh${i}@example.com`);
      for (const email of signups) expect((await signUp(client, email)).status).toBe(202);
      // What the server has (or is taking) when the reset has been answered: the two in flight
      // can still arrive before it, and one more: the reset's mail is queued at the next tick of
      // the after-answer queue (src/account/paced-work.ts, up to 250 ms after the answer), and a
      // connection that frees up meanwhile takes the next sign-up. Counted after the answer, not
      // before the request: a loaded machine may take a slot's time to answer.
      expect(
        (await postWithCsrf(client, '/api/account/password/forgot', { email: 'ada@example.com' }))
          .status,
      ).toBe(202);
      const arrivedBefore = smtp.received.length;
      await smtp.waitFor(signups.length + 1, 30_000);
      const order = smtp.received.map((mail) => mail.envelopeTo[0]);
      const resetAt = order.indexOf('ada@example.com');
      expect(smtp.received[resetAt]?.parsed.subject).toMatch(/Reset your/);
      expect(resetAt).toBeLessThanOrEqual(arrivedBefore + 3);
      // Without the order it would be last: every sign-up after it was queued before it.
      expect(signups.length - resetAt).toBeGreaterThanOrEqual(3);
      expect(new Set(order).size).toBe(signups.length + 1);
    },
    60_000,
  );
});

describe.skipIf(!firstPass)('MAIL_RATE_PER_MINUTE (SQLite)', () => {
  let mailed: MailService | undefined;

  beforeAll(async () => {
    mailed = await startMailService({ env: { SIGNUP: 'open', MAIL_RATE_PER_MINUTE: '3' } });
  }, 60_000);
  afterAll(() => mailed?.close());

  it('caps the deliveries started in a minute: the rest wait queued, none lost', async () => {
    const { service, smtp } = mailed as MailService;
    const client = new Client(service.url);
    for (let i = 0; i < 5; i += 1)
      expect((await signUp(client, `capped${i}@example.com`)).status).toBe(202);
    await smtp.waitFor(3);
    // Well past what an uncapped worker needs for two more mails on loopback.
    await sleep(3_000);
    expect(smtp.received).toHaveLength(3);
    const listed = await service.cli(['mail', 'list', '--state', 'queued', '--json']);
    expect(listed.code).toBe(0);
    const queued = JSON.parse(listed.stdout) as { kind: string }[];
    expect(queued.map((mail) => mail.kind)).toEqual(['signup-confirmation', 'signup-confirmation']);
  }, 30_000);
});
