import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf } from '../helpers/account-requests.js';
import { linkIn } from '../helpers/mail-reading.js';
import type { Client } from '../helpers/client.js';
import { hasPostgres } from '../helpers/postgres.js';
import type { LoopbackSmtp } from '../helpers/smtp.js';
import { hidden, noticeOf, signedInBrowser, unescape } from '../pages/page-helpers.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';

/*
 * Issue 39, item 4: personal access tokens on the `/account` page, as a browser without script
 * uses it: the section lists the live tokens, its form makes one (the current password unless
 * the session is recent) and the answer shows it this once, its revoke buttons end one, its
 * refusals are told in the form; the owner is mailed a notice (a real SMTP server on loopback).
 * The service in process over real HTTP; SQLite, and PostgreSQL under scripts/with-postgres.sh.
 */

const password = 'correct horse battery staple';
// Short, so a session signed in before the wait is no longer recent: the form asks the password.
const reauthMaxAgeSeconds = 4;

const signedIn = (service: AccountService, email: string) =>
  signedInBrowser(service, { email, password });

async function accountPage(client: Client): Promise<string> {
  const response = await client.get('/account');
  expect(response.status).toBe(200);
  return response.text();
}

/** The access tokens' section of a page. */
function tokensSection(html: string): string {
  const start = html.indexOf('<section aria-labelledby="tokens-title">');
  if (start < 0) throw new Error('no access tokens section');
  return html.slice(start, html.indexOf('</section>', start));
}

/** The create form of a page's section. */
function createForm(html: string): string {
  const section = tokensSection(html);
  const start = section.indexOf('<form method="post" action="/account/tokens">');
  return section.slice(start, section.indexOf('</form>', start));
}

/** Posts the create form as a browser would, with the page's CSRF token. */
async function create(client: Client, fields: Record<string, string>) {
  const csrfToken = hidden(await accountPage(client), 'csrfToken');
  return client.postForm('/account/tokens', { csrfToken, ...fields });
}

/** The token in the read-only field of an answer, if any. */
const shownToken = (html: string) =>
  /<textarea id="newAccessToken" class="secret" rows="2" readonly[^>]*>(gat_[0-9A-Za-z]{36})<\/textarea>/.exec(
    html,
  )?.[1];

/** `GET /api/auth/token` for a script holding only `token`. */
const tokenStatus = async (service: AccountService, token: string) =>
  (await fetch(`${service.url}/api/auth/token`, { headers: { authorization: `Bearer ${token}` } }))
    .status;

/** A date as the page prints it. */
function dayOf(iso: string): string {
  const months = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
  const at = new Date(iso);
  return `${at.getUTCDate()} ${months[at.getUTCMonth()]} ${at.getUTCFullYear()}`;
}
const today = () => dayOf(new Date().toISOString());

/** A password proof over JSON: the session is recent for REAUTH_MAX_AGE from now. */
async function reauthenticate(client: Client) {
  expect((await postWithCsrf(client, '/api/account/reauthenticate', { password })).status).toBe(
    200,
  );
}

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
];

describe.each(backends)('access tokens on the account page, $name', ({ backend, skip }) => {
  let service: AccountService;
  let smtp: LoopbackSmtp;
  let mailed: MailService | undefined;
  /** Signed in before the wait: not recent any more. */
  const stale = new Map<string, Client>();

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend,
      env: { REAUTH_MAX_AGE: String(reauthMaxAgeSeconds) },
      users: ['ada', 'bob', 'cy', 'dee', 'lin'].map((name) => `${name}@example.com`),
      password,
    });
    ({ service, smtp } = mailed);
    for (const name of ['ada', 'bob'])
      stale.set(name, await signedIn(service, `${name}@example.com`));
    await new Promise((resolve) => setTimeout(resolve, reauthMaxAgeSeconds * 1000 + 300));
  }, 60_000);
  afterAll(() => mailed?.close());

  it.skipIf(skip)(
    'the section says what tokens are for and lists the live ones, newest first, with their dates and a revoke button; the JSON route mails the notice too',
    async () => {
      const client = await signedIn(service, 'lin@example.com');
      const empty = tokensSection(await accountPage(client));
      expect(unescape(empty)).toContain(
        'For scripts and other backends that act as you: they trade a token at <code>GET /api/auth/token</code> for a short-lived one. A token never opens this page or changes your account.',
      );
      expect(empty).toContain('No access tokens.');
      const before = smtp.received.length;
      await reauthenticate(client);
      const made = async (body: Record<string, unknown>) => {
        const response = await postWithCsrf(client, '/api/account/tokens', body);
        expect(response.status).toBe(201);
        return (await response.json()) as { id: string; token: string; expiresAt: string };
      };
      const monthly = await made({ name: 'Monthly <report>', expiresInDays: 30 });
      const forever = await made({ name: 'deploy' });
      expect(await tokenStatus(service, forever.token)).toBe(200);

      const section = tokensSection(await accountPage(client));
      const items = [
        ...section.matchAll(/<li>\n<p class="what">([^<]*)<\/p>\n<p class="hint">([^<]*)<\/p>/g),
      ];
      expect(items.map(([, name, dates]) => [unescape(name ?? ''), dates])).toEqual([
        ['deploy', `Created ${today()} · never expires · last used ${today()}`],
        [
          'Monthly <report>',
          `Created ${today()} · expires ${dayOf(monthly.expiresAt)} · never used`,
        ],
      ]);
      for (const { id } of [monthly, forever])
        expect(section).toContain(`<input type="hidden" name="id" value="${id}">`);
      expect(section).toContain('aria-label="Revoke Monthly &lt;report&gt;">Revoke</button>');
      // The list never holds a secret.
      expect(section).not.toContain(monthly.token);
      expect(section).not.toContain(forever.token);

      const notice = await smtp.mailTo('lin@example.com', before, /access token was created/);
      expect(notice.parsed.subject).toBe(
        'A new access token was created for your Gatehouse account',
      );
      expect(notice.parsed.text).toContain(
        'A new access token named "Monthly <report>" was just created',
      );
      expect(notice.raw).not.toContain(monthly.token);
      linkIn(notice, '/account/lock');
    },
  );

  it.skipIf(skip)(
    'made from the page with the current password: shown once in the answer to its post (no-store, no redirect, no cookie), gone on reload, mailed about',
    async () => {
      const client = stale.get('ada') as Client;
      const page = await accountPage(client);
      const form = createForm(page);
      expect(form).toContain('name="currentPassword"');
      expect(form).toMatch(/<option value="90" selected>90 days<\/option>/);
      expect(form).toContain('<option value="">No expiry</option>');
      const before = smtp.received.length;
      const answer = await create(client, {
        name: 'nightly export',
        expiresInDays: '30',
        currentPassword: password,
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('location')).toBeNull();
      const html = await answer.text();
      const token = shownToken(html);
      expect(token).toBeDefined();
      expect(noticeOf(html)).toEqual({
        role: 'status',
        text: 'Access token created. Copy it now from &quot;Access tokens&quot; below: it is not shown again.',
      });
      expect(unescape(tokensSection(html))).toContain(
        'Your new access token "nightly export"</strong> (expires',
      );
      expect(tokensSection(html)).toContain('Copy it now: it is not shown again.');
      // In this answer only: no cookie carries it, and the browser's jar does not hold it.
      expect(answer.headers.getSetCookie().join('\n')).not.toContain(token);
      expect(client.cookieHeader()).not.toContain(token);
      expect(await tokenStatus(service, token as string)).toBe(200);

      const again = await accountPage(client);
      expect(shownToken(again)).toBeUndefined();
      expect(again).not.toContain(token);
      expect(tokensSection(again)).toContain('<p class="what">nightly export</p>');
      // The address the post left in the bar leads to the page, without the token.
      const bar = await client.get('/account/tokens');
      expect([bar.status, new URL(bar.headers.get('location') ?? '').pathname]).toEqual([
        303,
        '/account',
      ]);
      expect(again).toMatch(/<p class="what">Access token created<\/p>/);

      const notice = await smtp.mailTo('ada@example.com', before, /access token was created/);
      expect(notice.parsed.text).toContain('"nightly export"');
      expect(notice.raw).not.toContain(token);
      expect(linkIn(notice, '/account/lock')).toMatch(
        /^http:\/\/127\.0\.0\.1:\d+\/account\/lock\?token=/,
      );
    },
  );

  it.skipIf(skip)(
    'a recent session is not asked for the password; "No expiry" makes one that never expires',
    async () => {
      const client = await signedIn(service, 'cy@example.com');
      expect(createForm(await accountPage(client))).not.toContain('currentPassword');
      const answer = await create(client, { name: 'forever', expiresInDays: '' });
      expect(answer.status).toBe(200);
      const html = await answer.text();
      expect(shownToken(html)).toBeDefined();
      expect(unescape(tokensSection(html))).toContain(
        'Your new access token "forever"</strong> (never expires)',
      );
    },
  );

  it.skipIf(skip)(
    'revoked from the page: it stops working at once; one gone already is said at the top',
    async () => {
      const client = await signedIn(service, 'dee@example.com');
      await reauthenticate(client);
      const made = await postWithCsrf(client, '/api/account/tokens', { name: 'ci' });
      expect(made.status).toBe(201);
      const { id, token } = (await made.json()) as { id: string; token: string };
      const revoke = async () => {
        const csrfToken = hidden(await accountPage(client), 'csrfToken');
        return client.postForm('/account/tokens/revoke', { csrfToken, id });
      };
      const revoked = await revoke();
      expect(revoked.status).toBe(303);
      expect(revoked.headers.get('location')).toBe(
        `${service.url}/account?done=access-token-revoke`,
      );
      const page = await (await client.get('/account?done=access-token-revoke')).text();
      expect(noticeOf(page)?.text).toBe(
        'The access token was revoked: it can no longer get tokens for your account.',
      );
      expect(tokensSection(page)).toContain('No access tokens.');
      expect(page).toMatch(/<p class="what">Access token revoked<\/p>/);
      expect(await tokenStatus(service, token)).toBe(401);
      const twice = await revoke();
      expect(twice.status).toBe(404);
      expect(noticeOf(await twice.text())).toEqual({
        role: 'alert',
        text: 'That access token was revoked already, or it expired.',
      });
    },
  );

  it.skipIf(skip)(
    'refusals are told in the form, the name and expiry kept: no password, a wrong one, a bad name or expiry, too many tokens',
    async () => {
      const client = stale.get('bob') as Client;
      const alertIn = (html: string) =>
        /<div id="notice" class="notice notice-error" role="alert"><p>([^<]*)<\/p><\/div>/.exec(
          createForm(html),
        )?.[1];
      const refused = async (fields: Record<string, string>, status: number, said: string) => {
        const answer = await create(client, fields);
        expect(answer.status).toBe(status);
        const html = await answer.text();
        expect(alertIn(html)).toBe(said);
        expect(shownToken(html)).toBeUndefined();
        // The form is open again, with what was typed.
        expect(tokensSection(html)).toContain('<details open>');
        return createForm(html);
      };
      const asked = await refused(
        { name: 'backup', expiresInDays: '7' },
        401,
        'Enter your current password to create an access token.',
      );
      expect(asked).toMatch(/name="currentPassword"[^>]*aria-invalid="true" autofocus/);
      expect(asked).toContain('value="backup"');
      expect(asked).toContain('<option value="7" selected>7 days</option>');
      const wrong = await refused(
        { name: 'backup', expiresInDays: '7', currentPassword: 'not the password' },
        403,
        'Your current password is not correct, so no access token was created.',
      );
      expect(wrong).toMatch(/name="currentPassword"[^>]*aria-invalid="true"/);
      const named = await refused(
        { name: '   ', expiresInDays: '7', currentPassword: password },
        422,
        'Enter a name of 1 to 200 characters.',
      );
      expect(named).toMatch(/id="accessTokenName"[^>]*aria-invalid="true" autofocus/);
      // The right password made the session recent: no password asked for now.
      expect(named).not.toContain('currentPassword');
      const tampered = await refused(
        { name: 'backup', expiresInDays: '999', currentPassword: password },
        422,
        'Choose one of the expiries offered.',
      );
      expect(tampered).toMatch(/id="accessTokenExpiry"[^>]*aria-invalid="true"/);
      const listed = (await (await client.get('/api/account/tokens')).json()) as { tokens: [] };
      expect(listed.tokens).toEqual([]);

      for (let i = 0; i < 50; i += 1) {
        // Each proof holds for REAUTH_MAX_AGE only (4 s): five creations in that, not ten, so a
        // loaded machine's slower requests stay inside it.
        if (i % 5 === 0) await reauthenticate(client);
        const made = await postWithCsrf(client, '/api/account/tokens', { name: `t${i}` });
        expect(made.status).toBe(201);
      }
      await refused(
        { name: 'one too many', expiresInDays: '90', currentPassword: password },
        409,
        'This account holds 50 access tokens, the most it may: revoke one first. No token was created.',
      );
    },
    60_000,
  );
});
