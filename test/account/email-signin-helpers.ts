import { expect } from 'vitest';
import { Client } from '../helpers/client.js';
import { secretsIn } from '../helpers/mail-reading.js';
import type { LoopbackSmtp, ReceivedMail } from '../helpers/smtp.js';
import { browserAccept, hidden } from '../pages/page-helpers.js';
import type { AccountService } from './account-service.js';

/*
 * A sign-in by e-mail as its clients make it (EMAIL_SIGNIN=on, docs/behaviour.md): an Auth.js
 * client (next-auth/react's `signIn("email")`, JSON variant) or a browser's form post, the mail
 * read from the loopback SMTP server, its link's page and button, its code.
 */

export const mailedLinkPath = '/api/auth/callback/email';

/** A client from `ip` (TRUST_PROXY=127.0.0.1 believes it): one browser, its own cookie jar. */
export const clientAt = (service: AccountService, ip = '127.0.0.1') =>
  new Client(service.url, {
    'x-forwarded-for': ip,
    'user-agent': 'EmailSignInTest/1.0 (X11; Linux x86_64)',
  });

/** A browser's form posts: HTML asked for, from this origin. */
export const browserAt = (service: AccountService, ip = '127.0.0.1') =>
  new Client(service.url, {
    'x-forwarded-for': ip,
    accept: browserAccept,
    origin: service.url,
    'sec-fetch-site': 'same-origin',
  });

/** `signIn("email", { email, redirect: false })` as next-auth/react posts it. */
export async function askMail(
  client: Client,
  email: string,
  options: { provider?: 'email' | 'nodemailer'; callbackUrl?: string } = {},
): Promise<Response> {
  const csrfToken = await client.csrfToken();
  return client.postForm(
    `/api/auth/signin/${options.provider ?? 'email'}`,
    { email, csrfToken, callbackUrl: options.callbackUrl ?? `${client.baseUrl}/app` },
    { 'x-auth-return-redirect': '1' },
  );
}

/** The `url` of an Auth.js JSON answer, as next-auth/react reads it. */
export async function urlOf(response: Response): Promise<URL> {
  const { url } = (await response.json()) as { url: string };
  return new URL(url);
}

/** `error` and `code` of an Auth.js JSON answer ('' for none). */
export async function refusalOf(response: Response): Promise<string> {
  const url = await urlOf(response);
  return `${url.searchParams.get('error') ?? ''} ${url.searchParams.get('code') ?? ''}`.trim();
}

/** The first mail to `to` after the first `since`, its whole link and its code. */
export async function mailedSecrets(smtp: LoopbackSmtp, to: string, since: number) {
  const mail = await smtp.mailTo(to, since, /Sign in to|Create your/);
  const { code } = secretsIn(mail, mailedLinkPath);
  const link = new RegExp(`https?://\\S+${mailedLinkPath}\\?\\S+`).exec(mail.parsed.text ?? '');
  if (link === null) throw new Error(`no link in:\n${mail.parsed.text}`);
  return { mail, link: link[0], code };
}

export const mailsTo = (smtp: LoopbackSmtp, to: string): ReceivedMail[] =>
  smtp.received.filter((mail) => mail.envelopeTo.includes(to));

/**
 * Opens the mailed link as a browser and presses its button (the form as the page prints it),
 * as an Auth.js client would read the answer (`X-Auth-Return-Redirect`).
 */
export async function pressLinkButton(client: Client, link: string): Promise<Response> {
  const page = await client.get(link.slice(client.baseUrl.length), { accept: browserAccept });
  expect(page.status).toBe(200);
  const html = await page.text();
  // A link that cannot be used has no button: posted anyway, as from a page left open before.
  const fields: Record<string, string> = html.includes('name="token"')
    ? {
        csrfToken: hidden(html, 'csrfToken'),
        token: hidden(html, 'token'),
        callbackUrl: hidden(html, 'callbackUrl'),
      }
    : {
        csrfToken: await client.csrfToken(),
        token: new URL(link).searchParams.get('token') ?? '',
      };
  return client.postForm(mailedLinkPath, fields, {
    'x-auth-return-redirect': '1',
    origin: client.baseUrl,
    'sec-fetch-site': 'same-origin',
  });
}

/** The code typed back with the address, from `client`'s browser (its own CSRF pair). */
export async function typeCode(client: Client, email: string, code: string): Promise<Response> {
  const csrfToken = await client.csrfToken();
  return client.postForm(
    mailedLinkPath,
    { csrfToken, email, code },
    { 'x-auth-return-redirect': '1' },
  );
}

/** Who `client` is signed in as, or null. */
export async function sessionEmail(client: Client): Promise<string | null> {
  const body = (await (await client.get('/api/auth/session')).json()) as {
    user: { email: string };
  } | null;
  return body?.user.email ?? null;
}

/** The audit log's entries of `type` (the built CLI's `audit export`). */
export async function auditEntries(service: AccountService, type: string) {
  const exported = await service.cli(['audit', 'export']);
  expect(exported.code).toBe(0);
  return exported.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; userId: string; detail: unknown })
    .filter((entry) => entry.type === type);
}
