import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '../helpers/client.js';
import { freePort } from '../helpers/processes.js';
import type { LoopbackSmtp, ReceivedMail } from '../helpers/smtp.js';
import { runNode } from '../helpers/spawn.js';
import { startAccountService, type AccountService } from './account-service.js';

/*
 * What the invitation suites share: a service whose AUTH_URL is its own address (the CLI builds
 * links on it), the CLI run with the service's settings, and the mail read as a person reads it.
 */

export interface InviteService extends AccountService {
  /** `gatehouse users invite …` with the service's database, AUTH_URL and mail settings. */
  invite(args: string[], env?: Record<string, string>): ReturnType<typeof runNode>;
  /** The environment the CLI runs with. */
  cliEnv: Record<string, string>;
}

/** The built service on a free port with AUTH_URL set to it, and its CLI with the same settings. */
export async function startInviteService(
  databaseEnv: Record<string, string>,
  env: Record<string, string> = {},
): Promise<InviteService> {
  const port = await freePort();
  const authUrl = `http://127.0.0.1:${port}`;
  const service = await startAccountService(databaseEnv, {
    PORT: String(port),
    AUTH_URL: authUrl,
    ...env,
  });
  const cliEnv = { ...databaseEnv, AUTH_URL: authUrl, ...env };
  return Object.assign(service, {
    cliEnv,
    invite: (args: string[], extra: Record<string, string> = {}) =>
      runNode('gatehouse-cli.cjs', ['users', 'invite', ...args], { ...cliEnv, ...extra }),
  });
}

export const userAgent = 'InviteTest/1.0 (X11; Linux x86_64)';
export const browser = (service: AccountService) =>
  new Client(service.url, { 'user-agent': userAgent });

export async function post(client: Client, path: string, body: Record<string, unknown>) {
  const csrfToken = await client.csrfToken();
  return client.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ csrfToken, ...body }),
  });
}

export const accept = (client: Client, body: Record<string, unknown>) =>
  post(client, '/api/account/invitation/accept', body);

export async function errorCode(response: Response) {
  const body = (await response.json()) as { error: { code: string } };
  return `${response.status} ${body.error.code}`;
}

/** The printed link of `invite --print-link` (its last line). */
export function printedLink(stdout: string): string {
  const link = /https?:\/\/\S+\/account\/invitation\?token=[\w-]+/.exec(stdout)?.[0];
  if (link === undefined) throw new Error(`no link in:\n${stdout}`);
  return link;
}

export const tokenOf = (link: string) => new URL(link).searchParams.get('token') ?? '';
export const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;

/** The first mail to `to` whose subject matches, after the first `after` mails, waiting for it. */
export async function mailTo(smtp: LoopbackSmtp, to: string, subject: RegExp, after = 0) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = smtp.received
      .slice(after)
      .find((mail) => mail.envelopeTo.includes(to) && subject.test(mail.parsed.subject ?? ''));
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject}`);
    await sleep(25);
  }
}

/** The link a person reads in the plain-text body of an invitation. */
export function invitationLinkOf(mail: ReceivedMail): string {
  const text = mail.parsed.text ?? '';
  const link = /https?:\/\/\S+\/account\/invitation\?token=[\w-]+/.exec(text)?.[0];
  if (link === undefined) throw new Error(`no invitation link in:\n${text}`);
  return link;
}

/** A mail scanner (Defender safe links): GETs every link in every mail before anyone reads it. */
export async function scanEveryLink(smtp: LoopbackSmtp) {
  let scanned = 0;
  for (const mail of smtp.received) {
    const links =
      `${mail.parsed.text ?? ''} ${typeof mail.parsed.html === 'string' ? mail.parsed.html : ''}`.match(
        /https?:\/\/[^\s"'<>]+/g,
      );
    for (const link of links ?? []) {
      const response = await fetch(link.replace(/&amp;/g, '&'), { redirect: 'manual' });
      await response.arrayBuffer();
      scanned += 1;
    }
  }
  return scanned;
}

/** A hidden field's value in a page. */
export const hiddenField = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
