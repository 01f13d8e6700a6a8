import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { linkIn } from '../helpers/mail-reading.js';
import { freePort } from '../helpers/processes.js';
import type { ReceivedMail } from '../helpers/smtp.js';
import { runNode } from '../helpers/spawn.js';
import {
  startAccountService,
  startMailService,
  type AccountService,
  type MailService,
  type MailServiceOptions,
} from './account-service.js';

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

/** The service on a free port with AUTH_URL set to it, and its CLI with the same settings. */
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

/** startInviteService mailing a loopback SMTP server, over a database of its own. */
export const startInviteMailService = (
  options: MailServiceOptions = {},
): Promise<MailService<InviteService>> =>
  startMailService({ ...options, start: startInviteService });

export const userAgent = 'InviteTest/1.0 (X11; Linux x86_64)';
export const browser = (service: AccountService) =>
  new Client(service.url, { 'user-agent': userAgent });

export const accept = (client: Client, body: Record<string, unknown>) =>
  postWithCsrf(client, '/api/account/invitation/accept', body);

/** The printed link of `invite --print-link` (its last line). */
export function printedLink(stdout: string): string {
  const link = /https?:\/\/\S+\/account\/invitation\?token=[\w-]+/.exec(stdout)?.[0];
  if (link === undefined) throw new Error(`no link in:\n${stdout}`);
  return link;
}

export const tokenOf = (link: string) => new URL(link).searchParams.get('token') ?? '';
export const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;

/** The link a person reads in the plain-text body of an invitation. */
export const invitationLinkOf = (mail: ReceivedMail): string => linkIn(mail, '/account/invitation');

/** A hidden field's value in a page. */
export const hiddenField = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
