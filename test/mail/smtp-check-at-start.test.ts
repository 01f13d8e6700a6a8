import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceDatabase, startBuiltService } from '../account/account-service.js';
import { LoopbackSmtp, smtpPassword, smtpUser } from '../helpers/smtp.js';

/*
 * What start-up says about the SMTP transport (issue 28 item 5), black-box: the built service
 * (`npm run build` first) and a real SMTP server on loopback that checks the login. One line
 * names the host, port, TLS mode and user (never the password); a connection-and-login check
 * runs after the service listens, and a refused login or an unknown host is a warning naming
 * SMTP_URL, while the service serves on.
 */

let smtp: LoopbackSmtp;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  smtp = await LoopbackSmtp.start('up');
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await smtp.close();
});

async function start(smtpUrl: string) {
  const database = await serviceDatabase('sqlite');
  const service = await startBuiltService(database.env, {
    SMTP_URL: smtpUrl,
    MAIL_FROM: 'Acme <no-reply@acme.test>',
    LOG_LEVEL: 'info',
  });
  stops.push(async () => {
    await service.stop();
    await database.dispose();
  });
  return service;
}

/** The JSON log lines whose message matches. */
async function linesMatching(output: () => string, pattern: RegExp, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string } & Record<string, unknown>)
      .filter((line) => pattern.test(line.msg));
    if (lines.length > 0 || Date.now() > deadline) return lines;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the SMTP transport at start', () => {
  it('one line names host, port, TLS mode and user, never the password; the login is checked once the service listens', async () => {
    const logins = smtp.logins;
    const service = await start(smtp.url);
    const [line] = await linesMatching(service.output, /^mail goes through/);
    expect(line?.msg).toBe(
      `mail goes through 127.0.0.1:${smtp.port} (TLS: starttls when offered) as ${smtpUser}, from Acme <no-reply@acme.test>`,
    );
    expect(line?.smtp).toEqual({
      host: '127.0.0.1',
      port: smtp.port,
      tls: 'starttls when offered',
      user: smtpUser,
    });
    const checked = await linesMatching(service.output, /SMTP connection and login checked/);
    expect(checked).toHaveLength(1);
    expect(smtp.logins).toBe(logins + 1);
    expect(service.output()).not.toContain(smtpPassword);
    expect(service.output()).not.toContain(encodeURIComponent(smtpPassword));
  }, 30_000);

  it('a refused login (535) is a warning naming SMTP_URL and the answer; the service serves on', async () => {
    const wrong = smtp.url.replace(encodeURIComponent(smtpPassword), 'not-the-password');
    const service = await start(wrong);
    expect((await fetch(`${service.url}/api/health`)).status).toBe(200);
    const [warning] = await linesMatching(service.output, /SMTP check at start failed/);
    expect(warning?.level).toBe(40);
    expect(warning?.setting).toBe('SMTP_URL');
    expect(warning?.msg).toMatch(
      /^mail: the SMTP check at start failed \(SMTP_URL\): the server refused the login \(535\): check the user and password in SMTP_URL; EAUTH: .*535/,
    );
    expect(service.output()).not.toContain('not-the-password');
  }, 30_000);

  it('an unknown host is a warning naming SMTP_URL and the host; the start is not delayed by it', async () => {
    const service = await start('smtp://mailer@no-such-host.invalid:2525');
    expect((await fetch(`${service.url}/api/health/ready`)).status).toBe(200);
    const [warning] = await linesMatching(service.output, /SMTP check at start failed/);
    expect(warning?.msg).toContain('unknown host no-such-host.invalid: check the host in SMTP_URL');
  }, 30_000);
});
