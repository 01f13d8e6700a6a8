import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf as post } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { LoopbackSmtp } from '../helpers/smtp.js';
import { startService, type OwnService } from '../account/account-service.js';

/*
 * No SMTP password or reset link in clear text to a relay off the machine (issue 25.9):
 * `smtp://` with credentials to a non-loopback host requires STARTTLS unless SMTP_URL says
 * `?requireTLS=false`. Black-box: the service in process and a real SMTP
 * server, without STARTTLS, on this machine's own non-loopback address.
 */

const offLoopback = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a !== undefined && !a.internal && a.family === 'IPv4')?.address;

interface Mailed {
  smtp: LoopbackSmtp;
  own: OwnService;
}

async function start(query = ''): Promise<Mailed> {
  const smtp = await LoopbackSmtp.start('up', offLoopback);
  const own = await startService({
    users: ['ada@example.com'],
    env: { SMTP_URL: `${smtp.url}${query}`, MAIL_FROM: 'Acme <no-reply@acme.test>' },
  });
  return { smtp, own };
}

async function askForReset(mailed: Mailed) {
  const response = await post(new Client(mailed.own.service.url), '/api/account/password/forgot', {
    email: 'ada@example.com',
  });
  expect(response.status).toBe(202);
}

async function outbox(mailed: Mailed) {
  const listed = await mailed.own.service.cli(['mail', 'list', '--json']);
  return JSON.parse(listed.stdout) as { state: string; attempts: number; lastError: string }[];
}

describe.skipIf(offLoopback === undefined)('SMTP to a relay off this machine', () => {
  const started: Mailed[] = [];
  afterAll(async () => {
    for (const { own, smtp } of started) {
      await own.close();
      await smtp.close();
    }
  });

  let strict: Mailed;
  beforeAll(async () => {
    strict = await start();
    started.push(strict);
  });

  it('smtp:// with credentials to a relay without STARTTLS sends neither the password nor the mail', async () => {
    await askForReset(strict);
    let mails = await outbox(strict);
    for (let i = 0; i < 200 && !mails[0]?.lastError && mails[0]?.state !== 'sent'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      mails = await outbox(strict);
    }
    expect(mails[0]?.attempts).toBeGreaterThanOrEqual(1);
    expect(mails[0]?.lastError).toMatch(/STARTTLS/i);
    expect(strict.smtp.logins).toBe(0);
    expect(strict.smtp.received).toHaveLength(0);
  });

  it('?requireTLS=false in SMTP_URL is the operator allowing clear text: the mail goes', async () => {
    const lax = await start('?requireTLS=false');
    started.push(lax);
    await askForReset(lax);
    await lax.smtp.mailTo('ada@example.com');
    // The start-up check logs in once too (src/mail/start.ts), then the delivery does.
    expect(lax.smtp.logins).toBeGreaterThanOrEqual(1);
  });
});
