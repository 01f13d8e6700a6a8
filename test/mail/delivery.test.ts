import type { Kysely } from 'kysely';
import { registeredMails } from '../../src/account/upkeep-registry.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Dialect } from '../../src/db/open.js';
import type { Database } from '../../src/db/schema.js';
import type { DeliverySettings } from '../../src/mail/mail-worker.js';
import type { OutboxMail, OutboxState } from '../../src/mail/mail-outbox-store.js';
import { defaultSmtpTimeouts } from '../../src/mail/smtp-transport.js';
import { createMail, type Mail, type MailSettings } from '../../src/mail/start.js';
import { databaseBackends, openMigrated } from '../helpers/backends.js';
import { firstPass } from '../helpers/passes.js';
import { LoopbackSmtp } from '../helpers/smtp.js';

/** The row once an attempt has failed and said why (retries are from 100 ms here). */
async function waitForError(mail: Mail, id: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = (await mail.store.get(id)) as OutboxMail;
    if (row.lastError !== null) return row;
    if (Date.now() > deadline) throw new Error(`mail ${id} is ${row.state}, with no error yet`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The outbox and its worker in this process, over a real database (SQLite, and PostgreSQL when
 * TEST_POSTGRES_URL is set) and a real SMTP server on loopback driven up, down, stalled and
 * answering 4xx and 5xx. Times are shortened: retries from 100 ms, SMTP timeouts under a second.
 */
const backends = databaseBackends('mail');

const from = 'Acme Accounts <no-reply@acme.test>';
const fast: Partial<DeliverySettings> = {
  idlePollMs: 50,
  retryBaseMs: 100,
  retryMaxMs: 400,
  sweepIntervalMs: 50,
  drainMs: 300,
  attemptWaitMs: 1_000,
};
const timeouts = { connectionMs: 300, greetingMs: 300, socketMs: 500 };

function settings(
  smtp: LoopbackSmtp | undefined,
  overrides: Partial<MailSettings> = {},
): MailSettings {
  return {
    production: false,
    smtpUrl: smtp?.url,
    from: smtp === undefined ? undefined : from,
    productName: 'Acme <Cloud>',
    origin: 'https://auth.acme.test',
    templates: {},
    mails: registeredMails,
    retryBaseSeconds: 1,
    ratePerMinute: 120,
    ...overrides,
  };
}

interface Harness {
  mail: Mail;
  logs: { level: string; fields: Record<string, unknown>; message: string }[];
  sent: number;
  failed: number;
}

async function startMail(
  db: Kysely<Database>,
  dialect: Dialect,
  mailSettings: MailSettings,
  options: {
    delivery?: Partial<DeliverySettings>;
    now?: () => number;
    timeouts?: typeof timeouts;
  } = {},
): Promise<Harness> {
  const harness = { logs: [], sent: 0, failed: 0 } as unknown as Harness;
  const log = (level: string) => (fields: object, message: string) =>
    harness.logs.push({ level, fields: fields as Record<string, unknown>, message });
  harness.mail = await createMail(db, dialect, mailSettings, {
    log: { info: log('info'), warn: log('warn') },
    events: { mailSent: () => (harness.sent += 1), mailFailed: () => (harness.failed += 1) },
    delivery: { ...fast, ...options.delivery },
    timeouts: options.timeouts ?? timeouts,
    ...(options.now !== undefined && { now: options.now }),
  });
  return harness;
}

async function waitForState(mail: Mail, id: string, states: OutboxState[], timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = (await mail.store.get(id)) as OutboxMail;
    if (states.includes(row.state)) return row;
    if (Date.now() > deadline)
      throw new Error(`mail ${id} is ${row.state} (${row.lastError}), not ${states.join('|')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const resetMail = (to: string, expiresAt?: Date) => ({
  kind: 'password-reset' as const,
  to,
  values: {
    name: 'Ada <script>alert(1)</script>',
    link: 'https://auth.acme.test/account/reset?token=abc&x=1',
    code: 'K7Q-4M2',
    expiresInMinutes: '60',
  },
  ...(expiresAt !== undefined && { expiresAt }),
});

for (const backend of backends) {
  // The worker and its store only: no fast path is on its way (helpers/passes.ts).
  describe.skipIf(backend.skip || !firstPass)(`mail delivery on ${backend.name}`, () => {
    let db: Kysely<Database>;
    let dialect: Dialect;
    let close: (() => Promise<void>) | undefined;
    let smtp: LoopbackSmtp;

    beforeAll(async () => {
      ({ db, dialect, close } = await openMigrated(backend));
      smtp = await LoopbackSmtp.start('up');
    });
    afterAll(async () => {
      await smtp?.close();
      await close?.();
    });

    it('delivers a mail once: From, Subject, text and HTML bodies with the link and code, values escaped; then erases its body', async () => {
      await smtp.setMode('up');
      const h = await startMail(db, dialect, settings(smtp));
      h.mail.worker.start();
      const before = smtp.received.length;
      const id = await h.mail.queue.enqueueWithId(db, resetMail('ada@example.com'));
      const row = await waitForState(h.mail, id, ['sent']);
      await h.mail.worker.stop();

      expect(smtp.received.length).toBe(before + 1);
      const { parsed, envelopeTo } = smtp.received.at(-1)!;
      expect(envelopeTo).toEqual(['ada@example.com']);
      expect(parsed.from?.value).toEqual([
        { address: 'no-reply@acme.test', name: 'Acme Accounts' },
      ]);
      expect(parsed.subject).toBe('Reset your Acme <Cloud> password');
      expect(parsed.messageId).toBe(`<${id}@acme.test>`);
      expect(parsed.text).toContain('https://auth.acme.test/account/reset?token=abc&x=1');
      expect(parsed.text).toContain('K7Q-4M2');
      expect(parsed.text).toContain('Hello Ada <script>alert(1)</script>,');
      const html = parsed.html as string;
      expect(html).toContain('href="https://auth.acme.test/account/reset?token=abc&amp;x=1"');
      expect(html).toContain('K7Q-4M2');
      expect(html).toContain('Hello Ada &lt;script&gt;alert(1)&lt;/script&gt;,');
      expect(html).not.toContain('<script>');
      expect(html).toContain('Acme &lt;Cloud&gt;');
      expect(html).toContain('https://auth.acme.test');

      expect(row).toMatchObject({
        state: 'sent',
        attempts: 1,
        bodyText: null,
        bodyHtml: null,
        lastError: null,
      });
      expect(row.sentAt).toBeGreaterThan(0);
      expect(h.sent).toBe(1);
      expect(h.logs.filter((l) => l.message === 'mail sent')).toHaveLength(1);
      // No log line carries the link or the code.
      expect(JSON.stringify(h.logs)).not.toMatch(/token=abc|K7Q-4M2/);
    });

    it('a stored recipient that is not one bare address is never sent, not even to the mailbox inside it', async () => {
      await smtp.setMode('up');
      const h = await startMail(db, dialect, settings(smtp));
      h.mail.worker.start();
      const before = smtp.received.length;
      // As an address accepted by an older release could sit in the users table.
      const bad = await h.mail.queue.enqueueWithId(db, resetMail('owner<victim@example.com>'));
      const good = await h.mail.queue.enqueueWithId(db, resetMail('owner@example.com'));
      await waitForState(h.mail, good, ['sent']);
      const row = await waitForState(h.mail, bad, ['failed']);
      await h.mail.worker.stop();
      expect(row.lastError).toMatch(/not one bare address/);
      expect(smtp.received.slice(before).map((m) => m.envelopeTo)).toEqual([['owner@example.com']]);
      expect(smtp.received.at(-1)?.parsed.to).toMatchObject({
        value: [{ address: 'owner@example.com', name: '' }],
      });
    });

    it('SMTP down: the mail stays queued with the error, then arrives once when SMTP is up', async () => {
      await smtp.setMode('down');
      const h = await startMail(db, dialect, settings(smtp));
      h.mail.worker.start();
      const before = smtp.received.length;
      const id = await h.mail.queue.enqueueWithId(db, resetMail('down@example.com'));
      const queued = await waitForError(h.mail, id);
      expect(['queued', 'sending']).toContain(queued.state);
      expect(queued.attempts).toBeGreaterThanOrEqual(1);
      expect(queued.lastError).toMatch(/ECONNREFUSED|ECONNECTION/);
      expect(queued.lastError).not.toContain('odd#chars');
      expect(queued.bodyText).toContain('K7Q-4M2');
      await smtp.setMode('up');
      await waitForState(h.mail, id, ['sent']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await h.mail.worker.stop();
      expect(smtp.received.slice(before).map((m) => m.envelopeTo[0])).toEqual(['down@example.com']);
    });

    it('a stalled server cannot hold the worker: the attempt times out and the mail is retried', async () => {
      await smtp.setMode('stalled');
      const h = await startMail(db, dialect, settings(smtp));
      h.mail.worker.start();
      const id = await h.mail.queue.enqueueWithId(db, resetMail('stall@example.com'));
      // Its timeouts are under a second; a worker held by the stall would never say why.
      expect((await waitForError(h.mail, id)).lastError).toMatch(/ETIMEDOUT|timeout|Greeting/i);
      await smtp.setMode('up');
      await waitForState(h.mail, id, ['sent']);
      await h.mail.worker.stop();
    });

    it('an attempt the server answers late is waited for, not retried behind its back: one delivery', async () => {
      await smtp.setMode('slow');
      smtp.slowMs = 1_000;
      const h = await startMail(db, dialect, settings(smtp), {
        delivery: { attemptWaitMs: 200 },
        timeouts: { ...timeouts, socketMs: 5_000 },
      });
      h.mail.worker.start();
      const before = smtp.received.length;
      const id = await h.mail.queue.enqueueWithId(db, resetMail('slow@example.com'));
      const row = await waitForState(h.mail, id, ['sent']);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await h.mail.worker.stop();
      expect(row.attempts).toBe(1);
      expect(smtp.received.length).toBe(before + 1);
      expect(h.logs.map((l) => l.message)).toContain(
        'mail attempt still waiting for the SMTP server; its outcome is recorded when it answers',
      );
    });

    // The SMTP client's timeouts are the subject, not the store: 31 s of waiting once is enough.
    it.skipIf(backend.name !== 'SQLite')(
      'a relay that answers the end of a message only after 31 s gets it once (RFC 5321: 10 minutes)',
      async () => {
        await smtp.setMode('slow');
        smtp.slowMs = 31_000;
        const h = await startMail(db, dialect, settings(smtp), {
          delivery: { attemptWaitMs: 200 },
          timeouts: defaultSmtpTimeouts,
        });
        h.mail.worker.start();
        const before = smtp.received.length;
        const id = await h.mail.queue.enqueueWithId(db, resetMail('patient@example.com'));
        const row = await waitForState(h.mail, id, ['sent'], 40_000);
        await h.mail.worker.stop();
        expect([row.state, row.attempts, row.lastError]).toEqual(['sent', 1, null]);
        expect(smtp.received.length).toBe(before + 1);
      },
      60_000,
    );

    it('an attempt that outlasts its lease keeps the mail: no second copy while the first may still be accepted', async () => {
      await smtp.setMode('slow');
      smtp.slowMs = 1_500;
      const h = await startMail(db, dialect, settings(smtp), {
        delivery: { attemptWaitMs: 100, leaseMs: 300 },
        timeouts: { ...timeouts, socketMs: 5_000 },
      });
      h.mail.worker.start();
      const before = smtp.received.length;
      const id = await h.mail.queue.enqueueWithId(db, resetMail('lease@example.com'));
      const row = await waitForState(h.mail, id, ['sent']);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await h.mail.worker.stop();
      expect(row.attempts).toBe(1);
      expect(smtp.received.length).toBe(before + 1);
    });

    it('stopping waits for an attempt in flight, and another instance does not send the mail again', async () => {
      await smtp.setMode('slow');
      smtp.slowMs = 1_000;
      const a = await startMail(db, dialect, settings(smtp), {
        delivery: { attemptWaitMs: 100, drainMs: 5_000 },
        timeouts: { ...timeouts, socketMs: 5_000 },
      });
      const b = await startMail(db, dialect, settings(smtp));
      a.mail.worker.start();
      const before = smtp.received.length;
      const id = await a.mail.queue.enqueueWithId(db, resetMail('drain@example.com'));
      await smtp.waitFor(before + 1);
      await a.mail.worker.stop();
      b.mail.worker.start();
      await new Promise((resolve) => setTimeout(resolve, 800));
      await b.mail.worker.stop();
      expect((await a.mail.store.get(id))?.state).toBe('sent');
      expect(smtp.received.length).toBe(before + 1);
    });

    it('stopping before the server answers leaves the lease to run out: no other instance sends the mail at once', async () => {
      await smtp.setMode('slow');
      smtp.slowMs = 2_500;
      const a = await startMail(db, dialect, settings(smtp), {
        delivery: { attemptWaitMs: 100, drainMs: 200 },
        timeouts: { ...timeouts, socketMs: 5_000 },
      });
      const b = await startMail(db, dialect, settings(smtp));
      a.mail.worker.start();
      const before = smtp.received.length;
      const id = await a.mail.queue.enqueueWithId(db, resetMail('cut@example.com'));
      await smtp.waitFor(before + 1);
      await a.mail.worker.stop();
      b.mail.worker.start();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await b.mail.worker.stop();
      expect(smtp.received.length).toBe(before + 1);
      expect(a.logs.map((l) => l.message)).toContain(
        'stopping with mail attempts still waiting for the SMTP server: their leases are left to run out before they are tried again (the server may have taken them already: such a mail can arrive twice)',
      );
      await waitForState(a.mail, id, ['sent']);
    });

    it('4xx is retried until accepted; 5xx fails at once, keeping the body until it expires for `mail retry`', async () => {
      await smtp.setMode('4xx');
      const h = await startMail(db, dialect, settings(smtp));
      h.mail.worker.start();
      const busy = await h.mail.queue.enqueueWithId(db, resetMail('busy@example.com'));
      const retrying = await waitForError(h.mail, busy);
      expect(retrying.state).not.toBe('failed');
      expect(retrying.lastError).toMatch(/^EENVELOPE: 451/);
      await smtp.setMode('up');
      await waitForState(h.mail, busy, ['sent']);

      await smtp.setMode('5xx');
      const expiresAt = new Date(Date.now() + 60_000);
      const refused = await h.mail.queue.enqueueWithId(
        db,
        resetMail('nobody@example.com', expiresAt),
      );
      const failed = await waitForState(h.mail, refused, ['failed']);
      await h.mail.worker.stop();
      expect(failed.attempts).toBe(1);
      expect(failed.lastError).toMatch(/^EENVELOPE: 550/);
      expect(failed.bodyText).toContain('K7Q-4M2');
      expect(h.failed).toBe(1);
      // `mail retry`: queued again, sent once the server takes it.
      expect(await h.mail.store.retry(refused, Date.now(), 3_600_000)).toBe('queued');
      await smtp.setMode('up');
      const h2 = await startMail(db, dialect, settings(smtp));
      h2.mail.worker.start();
      await waitForState(h2.mail, refused, ['sent']);
      await h2.mail.worker.stop();
    });

    it('an undelivered mail is retried with growing delays for its window, then failed', async () => {
      await smtp.setMode('down');
      let clock = Date.now();
      const h = await startMail(db, dialect, settings(smtp), {
        now: () => clock,
        delivery: { retryBaseMs: 30_000, retryMaxMs: 15 * 60_000 },
      });
      h.mail.worker.start();
      const id = await h.mail.queue.enqueueWithId(db, {
        kind: 'test',
        to: 'window@example.com',
        values: {},
      });
      const delays: number[] = [];
      let row = await waitForState(h.mail, id, ['queued', 'failed']);
      while (row.state !== 'failed') {
        const attempts = row.attempts;
        if (attempts > 0 && row.lastError !== null) delays.push(row.nextAttemptAt - clock);
        clock = row.nextAttemptAt;
        h.mail.worker.wake();
        for (;;) {
          row = (await h.mail.store.get(id))!;
          if (row.state === 'failed' || (row.state === 'queued' && row.attempts > attempts)) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      await h.mail.worker.stop();
      // 30 s doubling, capped at 15 min, for at least an hour after it was queued.
      expect(delays.slice(0, 6)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000]);
      expect(clock - row.createdAt).toBeGreaterThanOrEqual(3_600_000);
      expect(row.lastError).toMatch(/ECONNREFUSED|ECONNECTION/);
      // No secret in it (a test mail): its body stays for `mail retry`.
      expect(row.bodyText).not.toBeNull();
    });

    it('a mail whose secret expired before it could be sent is failed, erased, and never sent', async () => {
      await smtp.setMode('up');
      const h = await startMail(db, dialect, settings(smtp));
      const before = smtp.received.length;
      const id = await h.mail.queue.enqueueWithId(
        db,
        resetMail('late@example.com', new Date(Date.now() - 1)),
      );
      h.mail.worker.start();
      const row = await waitForState(h.mail, id, ['failed']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await h.mail.worker.stop();
      expect(row).toMatchObject({
        bodyText: null,
        bodyHtml: null,
        lastError: 'expired before it could be sent',
      });
      expect(smtp.received.length).toBe(before);
    });

    it('development without SMTP_URL holds each mail, logs its link and code once, and erases it when it expires', async () => {
      // The worker's clock: the mail cannot expire before it is looked at, however slow the
      // machine, and expires when the clock says.
      let clock = Date.now();
      const h = await startMail(db, dialect, settings(undefined), { now: () => clock });
      expect(h.mail.mode).toBe('hold');
      expect(h.mail.queue.enabled).toBe(true);
      h.mail.worker.start();
      const id = await h.mail.queue.enqueueWithId(
        db,
        resetMail('dev@example.com', new Date(clock + 300)),
      );
      const held = (await h.mail.store.get(id))!;
      expect(held).toMatchObject({ state: 'held', attempts: 0 });
      expect(held.bodyText).toContain('K7Q-4M2');
      const lines = h.logs.filter((l) => l.fields.mail === id);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        level: 'warn',
        fields: {
          link: 'https://auth.acme.test/account/reset?token=abc&x=1',
          code: 'K7Q-4M2',
          to: 'dev@example.com',
        },
      });
      // Swept every 50 ms of real time, against the worker's clock.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await h.mail.store.get(id))?.bodyText).toContain('K7Q-4M2');
      clock += 600;
      const erased = await vi.waitFor(
        async () => {
          const row = (await h.mail.store.get(id))!;
          expect(row.bodyText).toBeNull();
          return row;
        },
        { timeout: 20_000, interval: 20 },
      );
      await h.mail.worker.stop();
      expect(erased).toMatchObject({ state: 'held', bodyText: null, bodyHtml: null });
    });

    it('production without SMTP_URL: mail is off and nothing can be queued', async () => {
      const h = await startMail(db, dialect, settings(undefined, { production: true }));
      expect(h.mail.queue.enabled).toBe(false);
      await expect(h.mail.queue.enqueue(db, resetMail('off@example.com'))).rejects.toThrow(
        /mail is off/,
      );
    });

    it('a mail queued in a transaction that rolls back is not there, nor sent', async () => {
      await smtp.setMode('up');
      const h = await startMail(db, dialect, settings(smtp));
      const before = (await h.mail.store.list({ limit: 10_000 })).length;
      await expect(
        db.transaction().execute(async (trx) => {
          await h.mail.queue.enqueue(trx, resetMail('rolled@example.com'));
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
      expect((await h.mail.store.list({ limit: 10_000 })).length).toBe(before);
    });

    it('a stopping worker gives back the lease of a mail it has not started, and leaves that of an attempt in flight to run out', async () => {
      await smtp.setMode('stalled');
      const h = await startMail(db, dialect, settings(smtp), {
        delivery: { drainMs: 50, leaseMs: 400, batch: 1 },
      });
      h.mail.worker.start();
      const id = await h.mail.queue.enqueueWithId(db, resetMail('drain@example.com'));
      await waitForState(h.mail, id, ['sending']);
      // Claimed by this holder but never handed to the transport, as a crash between the two leaves it.
      const unstarted = await h.mail.queue.enqueueWithId(db, resetMail('unstarted@example.com'));
      await h.mail.store.claimDue(
        Date.now(),
        (await h.mail.store.get(id))!.leaseHolder!,
        60_000,
        1,
      );
      await h.mail.worker.stop();
      expect(await h.mail.store.get(unstarted)).toMatchObject({
        state: 'queued',
        leaseHolder: null,
      });
      const row = (await h.mail.store.get(id))!;
      expect(row.state).toBe('sending');
      expect(row.leaseHolder).not.toBeNull();
      await smtp.setMode('up');
      const h2 = await startMail(db, dialect, settings(smtp));
      h2.mail.worker.start();
      await waitForState(h2.mail, unstarted, ['sent']);
      await waitForState(h2.mail, id, ['sent']);
      await h2.mail.worker.stop();
    });

    it('past the rate cap due mail waits for the window to move on, and a reset queued last goes first', async () => {
      await smtp.setMode('up');
      // A database of its own: mail other tests left due would take slots of the cap.
      const own = await openMigrated(backend);
      const windowMs = 1_500;
      // The window moves on only when this clock does: a real wait for "not yet" cannot be
      // overtaken by a window running out on a slow machine.
      let clock = Date.now();
      const h = await startMail(own.db, own.dialect, settings(smtp), {
        now: () => clock,
        delivery: { rateLimit: { count: 2, windowMs } },
      });
      try {
        const before = smtp.received.length;
        for (let i = 0; i < 4; i += 1)
          await h.mail.queue.enqueue(own.db, {
            kind: 'account-exists',
            to: `crowd${i}@example.com`,
            values: {},
          });
        h.mail.worker.start();
        await smtp.waitFor(before + 2);
        await h.mail.queue.enqueue(own.db, resetMail('urgent@example.com'));
        // Longer than the worker's own wait for the window (it polls again when it would lift).
        await new Promise((resolve) => setTimeout(resolve, windowMs + 500));
        expect(smtp.received.length).toBe(before + 2);
        clock += windowMs;
        h.mail.worker.wake();
        await smtp.waitFor(before + 4, 20_000);
        // The window's first two starts left it; the next two went together, the reset among them.
        const next = smtp.received.slice(before + 2, before + 4).map((m) => m.envelopeTo[0]);
        expect(next).toContain('urgent@example.com');
        clock += windowMs;
        h.mail.worker.wake();
        await smtp.waitFor(before + 5, 20_000);
        const got = smtp.received.slice(before).map((m) => m.envelopeTo[0]);
        expect(new Set(got).size).toBe(5);
      } finally {
        await h.mail.worker.stop();
        await own.close();
      }
    });

    it('two workers on one database deliver each of 50 mails exactly once', async () => {
      await smtp.setMode('up');
      const a = await startMail(db, dialect, settings(smtp));
      const b = await startMail(db, dialect, settings(smtp));
      const before = smtp.received.length;
      const ids: string[] = [];
      for (let i = 0; i < 50; i += 1)
        ids.push(
          await a.mail.queue.enqueueWithId(db, {
            kind: 'test',
            to: `many${i}@example.com`,
            values: {},
          }),
        );
      a.mail.worker.start();
      b.mail.worker.start();
      await smtp.waitFor(before + 50, 20_000);
      for (const id of ids) await waitForState(a.mail, id, ['sent']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await Promise.all([a.mail.worker.stop(), b.mail.worker.stop()]);
      // This test's mails: an earlier test's worker, stopped past its drain, may still land one.
      const got = smtp.received
        .slice(before)
        .map((m) => m.envelopeTo[0])
        .filter((to) => to?.startsWith('many') === true);
      expect(got).toHaveLength(50);
      expect(new Set(got).size).toBe(50);
      expect(a.sent + b.sent).toBe(50);
    });
  });
}
