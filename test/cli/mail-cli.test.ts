import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServerProcess, type ServerProcess } from '../helpers/processes.js';
import { LoopbackSmtp } from '../helpers/smtp.js';
import { distDir, runNode } from '../helpers/spawn.js';

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const production = {
  NODE_ENV: 'production',
  AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
  AUTH_URL: 'https://auth.example',
};

describe('gatehouse mail CLI without SMTP_URL', () => {
  let dir: string;
  let env: Record<string, string>;
  const mail = (args: string[], extra: Record<string, string> = {}) =>
    runNode('gatehouse-cli.cjs', ['mail', ...args], { ...env, ...extra });

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mail-cli-'));
    env = { DATA_DIR: dir, PAGE_PRODUCT_NAME: 'Acme' };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('an empty outbox says so', async () => {
    const result = await mail(['list']);
    expect(result).toMatchObject({ code: 0, stdout: 'the outbox is empty\n', stderr: '' });
  });

  it('in development a test mail is held; list shows it and show prints its body', async () => {
    const test = await mail(['test', '--to', ' Ada@Example.com ']);
    expect(test.stderr).toBe('');
    expect(test.code).toBe(0);
    const id = uuid.exec(test.stdout)?.[0] as string;
    expect(test.stdout).toBe(
      `held test mail ${id} for ada@example.com (development without SMTP_URL): \`npx gatehouse mail show ${id}\` shows it\n`,
    );
    const list = await mail(['list']);
    expect(list.stdout).toMatch(
      new RegExp(
        `^${id}\\theld\\ttest\\tada@example.com\\t\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\t0 attempts\\n$`,
      ),
    );
    expect(JSON.parse((await mail(['list', '--state', 'held', '--json'])).stdout)).toEqual([
      expect.objectContaining({
        id,
        state: 'held',
        kind: 'test',
        to: 'ada@example.com',
        subject: 'Test mail from Acme',
      }),
    ]);
    expect((await mail(['list', '--state', 'sent'])).stdout).toBe('no sent mail\n');
    const show = await mail(['show', id]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`id:            ${id}\n`);
    expect(show.stdout).toContain('state:         held\n');
    expect(show.stdout).toContain('This is a test mail from Acme');
    // In production the same command never prints a body: it may carry a secret.
    const hidden = await mail(['show', id], production);
    expect(hidden.stdout).toContain(
      'body:          not shown in production (it may carry a secret)',
    );
    expect(hidden.stdout).not.toContain('This is a test mail');
  });

  it('in production without SMTP_URL mail is off and nothing is queued', async () => {
    const result = await mail(['test', '--to', 'ada@example.com'], production);
    expect(result).toMatchObject({
      code: 1,
      stderr:
        'gatehouse: mail is off: set SMTP_URL (and MAIL_FROM) to send mail; password reset, verification and sign-up answer 404 until then, and invitations are only printed (npx gatehouse users invite --print-link); nothing was queued\n',
    });
  });

  it.each([
    [
      ['retry', '00000000-0000-0000-0000-000000000000'],
      1,
      'gatehouse: no mail with id 00000000-0000-0000-0000-000000000000\n',
    ],
    [['show', 'not-an-id'], 1, 'gatehouse: no mail has that id\n'],
    [['show'], 2, 'gatehouse: the mail id is required\n'],
    [
      ['list', '--state', 'lost'],
      2,
      'gatehouse: --state must be one of held, queued, sending, sent, failed\n',
    ],
    [['list', '--limit', '0'], 2, 'gatehouse: --limit must be a whole number from 1 to 10000\n'],
    [['test'], 2, 'gatehouse: --to is required\n'],
    [['test', '--to', 'nobody'], 2, 'gatehouse: --to is not an email address\n'],
  ])('mail %j exits %i: %s', async (args, code, stderr) => {
    const result = await mail(args);
    expect(result.stderr).toBe(stderr);
    expect(result.code).toBe(code);
  });

  it('retry queues a held mail for the service that has SMTP, and refuses one already queued, naming its state', async () => {
    const id = uuid.exec((await mail(['test', '--to', 'b@example.com'])).stdout)?.[0] as string;
    const queued = await mail(['retry', id]);
    expect(queued).toMatchObject({
      code: 0,
      stdout: `queued ${id} again: the service sends it within seconds\n`,
    });
    const again = await mail(['retry', id]);
    expect(again).toMatchObject({
      code: 1,
      stderr: `gatehouse: mail ${id} is queued, not failed or held: only failed or held mail is retried\n`,
    });
  });

  it('two ids, a misspelt command and --help are answered without echoing the arguments', async () => {
    const two = await mail(['show', 'a', 'secret-value']);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('unexpected argument after the id; this command takes one id');
    expect(two.stderr).not.toContain('secret-value');
    const typo = await mail(['lsit']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /^gatehouse: unknown command \(an argument not shown: it might be a password\); did you mean 'list'\?/,
    );
    const group = await runNode('gatehouse-cli.cjs', ['mial', 'list'], env);
    expect(group.stderr).toMatch(/did you mean 'mail'\?/);
    const help = await mail(['--help']);
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/^Usage: gatehouse mail <command>/);
    expect((await mail(['show', '--help'])).stdout).toMatch(/^Usage: gatehouse mail show ID/);
  });
});

describe('gatehouse mail CLI with SMTP and a running service', () => {
  let dir: string;
  let env: Record<string, string>;
  let smtp: LoopbackSmtp;
  let server: ServerProcess;
  const mail = (args: string[]) => runNode('gatehouse-cli.cjs', ['mail', ...args], env);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mail-cli-smtp-'));
    smtp = await LoopbackSmtp.start('up');
    env = {
      DATA_DIR: dir,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Acme <no-reply@acme.test>',
      MAIL_RETRY_SECONDS: '1',
      PAGE_PRODUCT_NAME: 'Acme',
    };
    const port = await freePort();
    server = await startServerProcess(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
      port,
      env: { PATH: process.env.PATH ?? '', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('mail test reports delivery by the running service, and the mail arrives once', async () => {
    const result = await mail(['test', '--to', 'ops@example.com', '--timeout-seconds', '15']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const id = uuid.exec(result.stdout)?.[0] as string;
    expect(result.stdout).toBe(
      `queued test mail ${id} for ops@example.com; waiting up to 15 s for delivery\ndelivered: the SMTP server accepted test mail ${id}\n`,
    );
    const [received] = await smtp.waitFor(1);
    expect(received?.parsed.subject).toBe('Test mail from Acme');
    expect(received?.parsed.from?.value).toEqual([{ name: 'Acme', address: 'no-reply@acme.test' }]);
    const show = await mail(['show', id]);
    expect(show.stdout).toContain('state:         sent\n');
    expect(show.stdout).toContain('body:          erased (sent, failed past use, or expired)');
  });

  it("a refused mail fails with the server's answer; mail retry queues it and it is delivered", async () => {
    await smtp.setMode('5xx');
    const result = await mail(['test', '--to', 'gone@example.com', '--timeout-seconds', '15']);
    expect(result.code).toBe(1);
    const id = uuid.exec(result.stdout)?.[0] as string;
    expect(result.stderr).toMatch(
      new RegExp(`^gatehouse: test mail ${id} failed: EENVELOPE: 550 `),
    );
    expect((await mail(['list', '--state', 'failed'])).stdout).toContain(
      `${id}\tfailed\ttest\tgone@example.com`,
    );
    await smtp.setMode('up');
    const before = smtp.received.length;
    const retry = await mail(['retry', id]);
    expect(retry).toMatchObject({
      code: 0,
      stdout: `queued ${id} again: the service sends it within seconds\n`,
    });
    await smtp.waitFor(before + 1);
    expect(smtp.received.at(-1)?.envelopeTo).toEqual(['gone@example.com']);
  });

  it('SMTP down: mail test says it is not delivered yet and why, and exits 1', async () => {
    await smtp.setMode('down');
    const result = await mail(['test', '--to', 'later@example.com', '--timeout-seconds', '4']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^gatehouse: test mail \S+ not delivered within 4 s: last error: (ECONNECTION|ESOCKET): .*ECONNREFUSED.*; the service retries it until /,
    );
    await smtp.setMode('up');
  });
});
