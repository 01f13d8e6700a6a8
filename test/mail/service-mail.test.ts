import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredMails } from '../../src/account/upkeep-registry.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { createMail } from '../../src/mail/start.js';
import { scrape, startGatehouse } from '../helpers/metrics.js';
import { createTestDatabase, describeIfPostgres, type TestDatabase } from '../helpers/postgres.js';
import {
  freePort,
  startServerProcess,
  untilOutput,
  type ServerProcess,
} from '../helpers/processes.js';
import { LoopbackSmtp } from '../helpers/smtp.js';
import { distDir, runNode } from '../helpers/spawn.js';

/** Black-box: the built service and CLI, a real database and a real SMTP server on loopback. */
const fastPaths = process.env.GATEHOUSE_TEST_FAST_PATHS === 'off' ? 'off' : 'on';
const production = {
  NODE_ENV: 'production',
  AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
  AUTH_URL: 'https://auth.example',
};
const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-service-mail-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function startService(env: Record<string, string>, port?: number): Promise<ServerProcess> {
  port ??= await freePort();
  return startServerProcess(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
    port,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), FAST_PATHS: fastPaths, ...env },
  });
}

/**
 * Waits for the start-up summary, written after the mail note: a service accepts connections
 * (what startService waits for) a moment before its start-up lines are out.
 */
async function untilStarted(server: ServerProcess): Promise<void> {
  await untilOutput(server.output, 'started in');
}

const logLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });

describe('start-up says once what becomes of mail', () => {
  it('production without SMTP_URL: "mail is off" once, as a warning, even with two workers', async () => {
    const server = await startService({ ...production, DATA_DIR: tempDir(), WORKERS: '2' });
    // Both workers listening (each logs that it is), and a moment for a second line, were there one.
    await untilOutput(server.output, /Server listening[^]*Server listening/);
    await sleep(300);
    await server.stop();
    const off = logLines(server.output()).filter((line) => line.msg.startsWith('mail is off'));
    expect(off).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'mail is off: set SMTP_URL (and MAIL_FROM) to send mail; password reset, verification and sign-up answer 404 until then, and invitations are only printed (npx gatehouse users invite --print-link)',
      }),
    ]);
  });

  it("production without AUTH_URL (AUTH_TRUST_HOST=true): mail is off, whatever SMTP_URL says, since a link would be built on the client's Host header", async () => {
    const smtp = await LoopbackSmtp.start('up');
    const port = await freePort();
    const server = await startService(
      {
        NODE_ENV: 'production',
        AUTH_SECRET: production.AUTH_SECRET,
        AUTH_TRUST_HOST: 'true',
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Acme <no-reply@acme.test>',
        DATA_DIR: tempDir(),
      },
      port,
    );
    try {
      // No mail flow exists for a client's Host header to steer.
      const forgot = await fetch(`http://127.0.0.1:${port}/api/account/password/forgot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ada@example.com' }),
      });
      expect(forgot.status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/account/password/forgot`)).status).toBe(404);
    } finally {
      await untilStarted(server);
      await server.stop();
      await smtp.close();
    }
    const off = logLines(server.output()).filter((line) => line.msg.startsWith('mail is off'));
    expect(off).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringContaining('set AUTH_URL') }),
    ]);
    expect(smtp.received).toHaveLength(0);
  });

  it('development without SMTP_URL: mail is held, said once; with SMTP_URL nothing is said', async () => {
    const held = await startService({ DATA_DIR: tempDir() });
    await untilStarted(held);
    await held.stop();
    expect(
      logLines(held.output()).filter((line) => line.msg.startsWith('mail is held')),
    ).toHaveLength(1);
    const smtp = await LoopbackSmtp.start('up');
    const sending = await startService({
      DATA_DIR: tempDir(),
      SMTP_URL: smtp.url,
      MAIL_FROM: 'a@example.com',
    });
    await untilStarted(sending);
    await sending.stop();
    await smtp.close();
    expect(sending.output()).not.toMatch(/mail is (off|held)/);
    expect(sending.output()).not.toContain('odd#chars');
    expect(sending.output()).not.toContain(encodeURIComponent('p@ss:word/with?odd#chars'));
  });
});

describe('a restart with mail queued loses none (SQLite)', () => {
  it('SMTP down, a mail queued, the service restarted, SMTP up: the mail arrives once', async () => {
    const smtp = await LoopbackSmtp.start('down');
    const env = {
      DATA_DIR: tempDir(),
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Acme <no-reply@acme.test>',
      MAIL_RETRY_SECONDS: '1',
      LOG_LEVEL: 'warn',
    };
    let server = await startService(env);
    const queued = await runNode(
      'gatehouse-cli.cjs',
      ['mail', 'test', '--to', 'restart@example.com', '--timeout-seconds', '3'],
      env,
    );
    expect(queued.code).toBe(1);
    expect(queued.stderr).toMatch(/not delivered within 3 s: last error: \w+: .*ECONNREFUSED/);
    await server.stop();
    server = await startService(env);
    await smtp.setMode('up');
    await smtp.waitFor(1, 15_000);
    // Long enough for a second delivery, were there one (retries are 1 s apart here).
    await sleep(3_000);
    await server.stop();
    await smtp.close();
    expect(smtp.received.map((mail) => mail.envelopeTo)).toEqual([['restart@example.com']]);
    const sent = await runNode(
      'gatehouse-cli.cjs',
      ['mail', 'list', '--state', 'sent', '--json'],
      env,
    );
    expect(JSON.parse(sent.stdout)).toEqual([
      expect.objectContaining({ to: 'restart@example.com', state: 'sent' }),
    ]);
  });
});

describeIfPostgres('two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let smtp: LoopbackSmtp;
  beforeAll(async () => {
    database = await createTestDatabase();
    smtp = await LoopbackSmtp.start('up');
  });
  afterAll(async () => {
    await smtp?.close();
    await database?.drop();
  });

  it('deliver each of 50 queued mails exactly once', async () => {
    const { db, dialect } = openDatabase(database.url);
    await migrateToLatest(db);
    const mail = await createMail(
      db,
      dialect,
      {
        production: false,
        smtpUrl: smtp.url,
        from: 'a@example.com',
        productName: 'Acme',
        origin: undefined,
        templates: {},
        mails: registeredMails,
        retryBaseSeconds: 1,
        ratePerMinute: 120,
      },
      {
        log: { info: () => undefined, warn: () => undefined },
        events: { mailSent: () => undefined, mailFailed: () => undefined },
        deliver: false,
      },
    );
    for (let i = 0; i < 50; i += 1)
      await mail.queue.enqueue(db, { kind: 'test', to: `fleet${i}@example.com`, values: {} });
    const env = {
      DATABASE_URL: database.url,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Acme <no-reply@acme.test>',
      LOG_LEVEL: 'info',
      DATA_DIR: tempDir(),
    };
    const [a, b] = await Promise.all([startService(env), startService(env)]);
    await smtp.waitFor(50, 30_000);
    // Each recorded as sent after the server took it: polled, not a fixed wait.
    const rowsOf = () => db.selectFrom('mail_outbox').select(['state', 'attempts']).execute();
    await expect
      .poll(async () => (await rowsOf()).filter((row) => row.state === 'sent').length, {
        timeout: 20_000,
      })
      .toBe(50);
    // Long enough for a second delivery of any of them to come too.
    await sleep(1_000);
    await Promise.all([a.stop(), b.stop()]);
    const rows = await rowsOf();
    await db.destroy();
    const to = smtp.received.map((received) => received.envelopeTo[0]);
    expect(to).toHaveLength(50);
    expect(new Set(to).size).toBe(50);
    expect(rows.every((row) => row.state === 'sent' && row.attempts === 1)).toBe(true);
    // Both took part (each logs the mails it sent).
    const sentBy = [a, b].map(
      (s) => logLines(s.output()).filter((line) => line.msg === 'mail sent').length,
    );
    expect(sentBy[0]! + sentBy[1]!).toBe(50);
  });
});

describe('mail metrics', () => {
  let smtp: LoopbackSmtp;
  let started: Awaited<ReturnType<typeof startGatehouse>>;
  let env: Record<string, string>;
  beforeAll(async () => {
    smtp = await LoopbackSmtp.start('down');
    const dataDir = tempDir();
    env = {
      DATA_DIR: dataDir,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'a@example.com',
      MAIL_RETRY_SECONDS: '1',
    };
    started = await startGatehouse(dataDir, env);
  });
  afterAll(async () => {
    await started?.server.stop();
    await smtp?.close();
  });

  it('count queued, sent and failed mail and the age of the oldest queued one', async () => {
    let metrics = await scrape(started.metricsUrl);
    expect(metrics.value('gatehouse_mail_queued')).toBe(0);
    expect(metrics.value('gatehouse_mail_oldest_queued_age_seconds')).toBe(0);
    expect(metrics.value('gatehouse_mail_sent_total')).toBe(0);
    expect(metrics.value('gatehouse_mail_failed_total')).toBe(0);
    expect(metrics.value('gatehouse_mail_held')).toBe(0);

    const queued = await runNode(
      'gatehouse-cli.cjs',
      ['mail', 'test', '--to', 'm@example.com', '--timeout-seconds', '1.5'],
      env,
    );
    expect(queued.code).toBe(1);
    metrics = await scrape(started.metricsUrl);
    expect(metrics.value('gatehouse_mail_queued')).toBe(1);
    expect(metrics.value('gatehouse_mail_oldest_queued_age_seconds')).toBeGreaterThan(1);

    await smtp.setMode('up');
    await smtp.waitFor(1, 20_000);
    // The backlog gauges are read from the outbox at most once a second, after the mail is
    // recorded as sent: polled until they show it.
    await expect
      .poll(async () => (await scrape(started.metricsUrl)).value('gatehouse_mail_queued'), {
        timeout: 20_000,
      })
      .toBe(0);
    metrics = await scrape(started.metricsUrl);
    expect(metrics.value('gatehouse_mail_queued')).toBe(0);
    expect(metrics.value('gatehouse_mail_oldest_queued_age_seconds')).toBe(0);
    expect(metrics.value('gatehouse_mail_sent_total')).toBe(1);

    await smtp.setMode('5xx');
    const refused = await runNode(
      'gatehouse-cli.cjs',
      ['mail', 'test', '--to', 'x@example.com', '--timeout-seconds', '10'],
      env,
    );
    expect(refused.code).toBe(1);
    // Counted just after the outbox says failed, which is what the command waited for.
    await expect
      .poll(async () => (await scrape(started.metricsUrl)).value('gatehouse_mail_failed_total'), {
        timeout: 10_000,
      })
      .toBe(1);
    metrics = await scrape(started.metricsUrl);
    expect(metrics.value('gatehouse_mail_sent_total')).toBe(1);
  });
});
