import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailService, type MailService } from '../account/account-service.js';

/*
 * A mail is delivered by the instance that has SMTP, wherever it was queued (issue 28.5): the
 * CLI run from a shell without SMTP_URL writes its mail as `held`, and the service that has
 * SMTP_URL sends it. Black-box: the service in process, the CLI with the
 * database's variables only, and a real SMTP server on loopback.
 */

describe('mail queued without SMTP_URL', () => {
  let mailed: MailService;

  beforeAll(async () => {
    mailed = await startMailService({ users: ['ada@example.com'] });
  });
  afterAll(async () => {
    await mailed?.close();
  });

  it('a test mail queued by the CLI from a shell without SMTP_URL reaches its mailbox', async () => {
    const test = await mailed.service.cli(['mail', 'test', '--to', 'held@example.com']);
    expect(test.stdout).toMatch(/^held test mail /);
    const mail = await mailed.smtp.mailTo('held@example.com');
    expect(mail.parsed.subject).toMatch(/^Test mail from /);
    const listed = await mailed.service.cli(['mail', 'list', '--json']);
    const states = (JSON.parse(listed.stdout) as { state: string }[]).map((m) => m.state);
    expect(states).not.toContain('held');
  });
});
