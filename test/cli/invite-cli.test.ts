import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import type { MailService } from '../account/account-service.js';
import {
  browser,
  hiddenField,
  invitationLinkOf,
  pathOf,
  printedLink,
  startInviteMailService,
  tokenOf,
  type InviteService,
} from '../account/invitation-helpers.js';
import type { LoopbackSmtp } from '../helpers/smtp.js';
import { runNode } from '../helpers/spawn.js';

/*
 * `gatehouse users invite` (issue 19 item 4), the built CLI on a real database: the mail it
 * queues, delivered by the running service to a real SMTP server on loopback and followed as a
 * person would; --print-link; every refusal with its exit code and words.
 */

const password = 'correct horse battery staple';

describe('gatehouse users invite, mailed through the service', () => {
  let mailed: MailService<InviteService>;
  let service: InviteService;
  let smtp: LoopbackSmtp;

  beforeAll(async () => {
    mailed = await startInviteMailService();
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it('queues the invitation; the person opens the mailed link, chooses a password on the page, and signs in', async () => {
    const invited = await service.invite(['--email', ' Grace@Example.COM ', '--name', 'Grace H']);
    expect(invited.stderr).toBe('');
    expect(invited.code).toBe(0);
    expect(invited.stdout).toMatch(
      /^invited grace@example\.com: the invitation mail is queued \(mail [0-9a-f-]{36}\) for the running service to send; the link works once, until \d{4}-\d\d-\d\dT[\d:.]+Z \(7 days\)\n$/,
    );
    const mail = await smtp.mailTo('grace@example.com', 0, /^You're invited to Gatehouse$/);
    expect(mail.parsed.from?.text).toContain('no-reply@acme.test');
    expect(mail.parsed.text).toContain('Hello Grace H,');
    const link = invitationLinkOf(mail);
    // The token is in the mail only: never in the CLI's output.
    expect(invited.stdout).not.toContain(tokenOf(link));
    const listed = await runNode('gatehouse-cli.cjs', ['mail', 'list'], service.cliEnv);
    expect(listed.stdout).toMatch(/\tinvitation\tgrace@example\.com\t/);

    const person = browser(service);
    const page = await person.get(pathOf(link));
    const html = await page.text();
    expect(html).toContain('value="Grace H"');
    const done = await person.postForm(
      '/account/invitation',
      {
        csrfToken: hiddenField(html, 'csrfToken'),
        token: tokenOf(link),
        name: 'Grace Hopper',
        password,
        passwordRepeat: password,
      },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect(done.status).toBe(200);
    const signedIn = browser(service);
    await signedIn.signIn('grace@example.com', password);
    expect(signedIn.sessionCookie()).toBeDefined();
    const users = await runNode('gatehouse-cli.cjs', ['users', 'list'], service.cliEnv);
    expect(users.stdout).toMatch(/^grace@example\.com\tGrace Hopper\tenabled\t/m);

    // Now the address has an account: a new invitation is refused.
    const again = await service.invite(['--email', 'grace@example.com']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      'gatehouse: a user with email grace@example.com already exists: nothing was sent (they can sign in, or reset their password)\n',
    );
  });

  it('--print-link prints the link and mails nothing; inviting again voids it', async () => {
    const before = smtp.received.length;
    const first = await service.invite(['--email', 'lin@example.com', '--print-link']);
    expect(first.code).toBe(0);
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^invited lin@example\.com: not mailed \(--print-link\); the link works once, until .+ \(7 days\)$/,
    );
    expect(lines.at(-1)).toMatch(
      new RegExp(`^${service.url}/account/invitation\\?token=[\\w-]{43}$`),
    );
    const second = await service.invite(['--email', 'lin@example.com', '--print-link']);
    expect(second.stdout).toContain('1 earlier invitation of lin@example.com no longer works');
    const [firstLink, secondLink] = [printedLink(first.stdout), printedLink(second.stdout)];
    expect(secondLink).not.toBe(firstLink);
    expect((await browser(service).get(pathOf(firstLink))).status).toBe(400);
    expect((await browser(service).get(pathOf(secondLink))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(smtp.received.slice(before).some((m) => m.envelopeTo.includes('lin@example.com'))).toBe(
      false,
    );
  });
});

describe('gatehouse users invite refusals and development', () => {
  let dir: string;
  let env: Record<string, string>;
  // An empty value in `extra` removes the variable (the case without AUTH_URL).
  const invite = (args: string[], extra: Record<string, string> = {}) =>
    runNode(
      'gatehouse-cli.cjs',
      ['users', 'invite', ...args],
      Object.fromEntries(Object.entries({ ...env, ...extra }).filter(([, value]) => value !== '')),
    );

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-invite-'));
    env = {
      DATABASE_URL: `file:${path.join(dir, 'cli.db')}`,
      AUTH_URL: 'https://auth.example.com',
    };
    const added = await runNode(
      'gatehouse-cli.cjs',
      ['users', 'add', '--email', 'taken@example.com', '--password-stdin'],
      env,
      'a long and fine password',
    );
    expect(added.code).toBe(0);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'no AUTH_URL',
      ['--email', 'new@example.com'],
      { AUTH_URL: '' },
      1,
      "AUTH_URL is not set: the invitation link is built on the service's public origin; set it as the service has it, e.g. AUTH_URL=https://auth.example.com",
    ],
    [
      'production without SMTP_URL',
      ['--email', 'new@example.com'],
      { NODE_ENV: 'production' },
      1,
      'mail is off (production without SMTP_URL), so the invitation cannot be mailed: set SMTP_URL (and MAIL_FROM), or use --print-link to print the link and pass it on yourself',
    ],
    [
      'an address with an account',
      ['--email', 'Taken@example.com', '--print-link'],
      {},
      1,
      'a user with email taken@example.com already exists',
    ],
    ['no --email', ['--print-link'], {}, 2, '--email is required'],
    [
      'not an address',
      ['--email', 'nope', '--print-link'],
      {},
      2,
      '--email is not an email address',
    ],
    [
      'a long name',
      ['--email', 'new@example.com', '--name', 'x'.repeat(201)],
      {},
      2,
      '--name must be at most 200 characters',
    ],
    [
      'a control character in the name',
      ['--email', 'new@example.com', '--name', 'a\u001bb'],
      {},
      2,
      '--name must not hold control characters',
    ],
    [
      'a bad INVITE_TTL',
      ['--email', 'new@example.com'],
      { INVITE_TTL: '7d' },
      1,
      'INVITE_TTL: must be a whole number',
    ],
    [
      'a password option',
      ['--email', 'new@example.com', '--password', 'x'],
      {},
      2,
      'never taken from arguments',
    ],
  ])('%s: exit %#', async (_case, args, extra, code, message) => {
    const result = await invite(args, extra as Record<string, string>);
    expect(result.stderr).toContain(message);
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
  });

  it('nothing was written by a refusal', async () => {
    const { db } = openDatabase(env.DATABASE_URL as string);
    const rows = await db.selectFrom('account_tokens').select('email').execute();
    const mails = await db.selectFrom('mail_outbox').select('id').execute();
    await db.destroy();
    expect(rows).toEqual([]);
    expect(mails).toEqual([]);
  });

  it('in development without SMTP_URL the mail is held, and `mail show` has its link', async () => {
    const result = await invite(['--email', 'dev@example.com', '--name', 'Dev']);
    expect(result.code).toBe(0);
    const id = /mail show ([0-9a-f-]{36})/.exec(result.stdout)?.[1] ?? '';
    expect(result.stdout).toContain('the mail is held in the outbox (development without SMTP_URL');
    const shown = await runNode('gatehouse-cli.cjs', ['mail', 'show', id], env);
    expect(shown.stdout).toMatch(
      /https:\/\/auth\.example\.com\/account\/invitation\?token=[\w-]{43}/,
    );
    const { db } = openDatabase(env.DATABASE_URL as string);
    const row = await db
      .selectFrom('account_tokens')
      .selectAll()
      .where('email', '=', 'dev@example.com')
      .executeTakeFirstOrThrow();
    await db.destroy();
    expect(row).toMatchObject({ purpose: 'invite', user_id: null, name: 'Dev', code_hash: null });
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(shown.stdout).not.toContain(row.token_hash);
    expect(Number(row.expires_at) - Number(row.created_at)).toBe(604_800_000);
  });

  it('INVITE_TTL sets how long the link works', async () => {
    const result = await invite(['--email', 'ttl@example.com', '--print-link'], {
      INVITE_TTL: '7200',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('(2 hours)');
  });

  it('users invite --help explains the command, and users --help lists it', async () => {
    const help = await invite(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'Usage: gatehouse users invite --email <email> [--name <name>] [--print-link]',
    );
    const usage = await runNode('gatehouse-cli.cjs', ['users', '--help'], env);
    expect(usage.stdout).toMatch(/\n {2}invite {12}invite someone/);
  });
});
