import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serviceDatabase,
  startBuiltService,
  type AccountService,
} from '../account/account-service.js';
import { hasPostgres } from '../helpers/postgres.js';
import { freePort } from '../helpers/processes.js';
import { LoopbackSmtp } from '../helpers/smtp.js';

/*
 * The URL-valued settings carry secrets: SMTP_URL and DATABASE_URL a password, WEBHOOK_URL
 * perhaps a receiver's token in its query. The built service runs with all three wrong in a way
 * that makes it log about each on every attempt (an SMTP login refused, a webhook receiver that
 * is down), and the CLI adds a user and mails an invitation through it: no line it or the CLI
 * writes, from the start-up line to the retries' warnings, holds any of them.
 */

const smtpPassword = 'smtp-pw-not-shown';
const webhookToken = 'hook-token-not-shown';
const databasePassword = 'db-pw-not-shown';
const secrets = [smtpPassword, webhookToken, databasePassword];

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
];

async function until(output: () => string, patterns: RegExp[], timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!patterns.every((pattern) => pattern.test(output()))) {
    if (Date.now() > deadline) throw new Error(`not logged in time:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(backends)('secrets in URL settings on $name', ({ backend, skip }) => {
  let smtp: LoopbackSmtp;
  let service: AccountService;
  let dispose: () => Promise<void>;
  let env: Record<string, string>;

  beforeAll(async () => {
    if (skip) return;
    smtp = await LoopbackSmtp.start('up');
    const database = await serviceDatabase(backend);
    dispose = database.dispose;
    const databaseEnv = { ...database.env };
    if (databaseEnv.DATABASE_URL !== undefined) {
      // The test server trusts loopback: the password is never asked for, only carried.
      const url = new URL(databaseEnv.DATABASE_URL);
      url.password = databasePassword;
      databaseEnv.DATABASE_URL = url.toString();
    }
    env = {
      ...databaseEnv,
      SMTP_URL: `smtp://gatehouse:${smtpPassword}@127.0.0.1:${smtp.port}`,
      MAIL_FROM: 'Acme <no-reply@acme.test>',
      MAIL_RETRY_SECONDS: '1',
      // The invitation's link is built on it.
      AUTH_URL: 'http://localhost:3000',
      // A receiver that is not listening: every attempt fails and is logged.
      WEBHOOK_URL: `http://127.0.0.1:${await freePort()}/hooks?token=${webhookToken}`,
      WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      WEBHOOK_RETRY_SECONDS: '1',
    };
    service = await startBuiltService(env, { LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    if (skip) return;
    await service.stop();
    await dispose();
    await smtp.close();
  });

  it.skipIf(skip)(
    'no log line of the service or the CLI holds one of them',
    async () => {
      const added = await service.cli(
        ['users', 'add', '--email', 'ada@example.com', '--password-stdin'],
        'correct horse battery staple',
      );
      const invited = await service.cli(['users', 'invite', '--email', 'bob@example.com']);
      expect([added.code, invited.code]).toEqual([0, 0]);
      await until(service.output, [
        /started in development mode/,
        /SMTP check at start failed/,
        /mail not delivered yet/,
        /"attempt":2,[^\n]*webhook not delivered yet/,
      ]);
      const everything = [
        service.output(),
        added.stdout,
        added.stderr,
        invited.stdout,
        invited.stderr,
      ];
      for (const secret of secrets) expect(everything.join('\n')).not.toContain(secret);
      // The endpoint is still named, its token masked, so the operator knows which one fails.
      expect(service.output()).toContain('/hooks?token=***');
    },
    40_000,
  );
});
