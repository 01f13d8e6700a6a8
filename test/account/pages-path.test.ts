import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { linkIn, secretsIn } from '../helpers/mail-reading.js';
import { firstPass } from '../helpers/passes.js';
import { runNode } from '../helpers/spawn.js';
import type { LoopbackSmtp } from '../helpers/smtp.js';
import { hidden } from '../pages/page-helpers.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';

/*
 * ACCOUNT_PAGES_PATH moves every account page under one path an app forwards (here
 * `/api/auth/account`, beside Auth.js's `/api/auth/*`), so the app's own `/account` stays its
 * own. Black-box on the service in process: the pages answer there and the old paths 404, every link
 * the pages, forms, redirects and mails carry points there, and a reset made through the mailed
 * link works. Not about the fast paths: run once.
 */

const pages = '/api/auth/account';
const password = 'correct horse battery staple';
const newPassword = 'a brand new and long passphrase';
const sameOrigin = (service: AccountService) => ({
  origin: service.url,
  'sec-fetch-site': 'same-origin',
});
// Under no-referrer (a page whose URL carries a secret) a browser posts with Origin: null.
const noReferrer = { origin: 'null', 'sec-fetch-site': 'same-origin' };

const actionsIn = (html: string) =>
  [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((match) => match[1] as string);
const linksIn = (html: string) =>
  [...html.matchAll(/<a (?:class="[^"]*" )?href="([^"]+)"/g)].map((match) => match[1] as string);

/** Whether a sign-in made a session (a refused one answers 200 too, with `error=` in its URL). */
async function signedIn(client: Client, email: string, pass: string): Promise<boolean> {
  await client.signIn(email, pass);
  return client.sessionCookie() !== undefined;
}

describe.skipIf(!firstPass)('account pages under ACCOUNT_PAGES_PATH', () => {
  let mailed: MailService;
  let service: AccountService;
  let smtp: LoopbackSmtp;

  beforeAll(async () => {
    mailed = await startMailService({
      env: { ACCOUNT_PAGES_PATH: pages, SIGNUP: 'open', MAIL_RETRY_SECONDS: '1' },
      users: ['ada@example.com', 'bob@example.com'],
      password,
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(() => mailed?.close());

  it('the pages answer under the path and the old ones are 404', async () => {
    const person = new Client(service.url);
    for (const old of [
      '/account',
      '/account/password/forgot',
      '/account/password/reset',
      '/account/lock',
      '/account/email/verify',
      '/account/invitation',
      '/account/signup',
      '/account/signup/confirm',
      '/account/profile',
    ])
      expect([old, (await person.get(old)).status]).toEqual([old, 404]);
    for (const page of [
      '/password/forgot',
      '/password/reset',
      '/lock',
      '/email/verify',
      '/invitation',
      '/signup',
      '/signup/confirm',
    ])
      // 200, or 400 for the invitation's page without a token: answered, not 404.
      expect([page, (await person.get(`${pages}${page}`)).status]).toEqual([
        page,
        page === '/invitation' ? 400 : 200,
      ]);
    // Nobody signed in: the account page sends to sign-in, which comes back to it.
    const account = await person.get(pages);
    expect(account.status).toBe(303);
    expect(account.headers.get('location')).toBe(
      `${service.url}/api/auth/signin?callbackUrl=${encodeURIComponent(pages)}`,
    );
    // The JSON routes stay where they are.
    expect((await person.get('/api/account')).status).toBe(401);
    const signIn = await (await person.get('/api/auth/signin')).text();
    expect(signIn).toContain(`href="${pages}/password/forgot">Forgot your password?</a>`);
    expect(signIn).toContain(`href="${pages}/signup"`);
  });

  it('"forgot" → mail → the link under the path → new password → signed in with it; the notice\'s lock link is there too', async () => {
    const person = new Client(service.url);
    const forgot = await (await person.get(`${pages}/password/forgot`)).text();
    expect(actionsIn(forgot)).toEqual([`${pages}/password/forgot`]);
    const sent = await person.postForm(
      `${pages}/password/forgot`,
      { csrfToken: hidden(forgot, 'csrfToken'), email: 'ada@example.com' },
      sameOrigin(service),
    );
    expect(sent.status).toBe(200);
    const { link, token } = secretsIn(
      await smtp.mailTo('ada@example.com', 0, /Reset your/),
      `${pages}/password/reset`,
    );
    expect(link.startsWith(`${service.url}${pages}/password/reset?token=`)).toBe(true);
    const resetPage = await person.get(new URL(link).pathname + new URL(link).search);
    expect(resetPage.status).toBe(200);
    const resetHtml = await resetPage.text();
    // The link's form, and the form for the mailed code.
    expect(new Set(actionsIn(resetHtml))).toEqual(new Set([`${pages}/password/reset`]));
    for (const html of [forgot, resetHtml])
      for (const href of linksIn(html)) expect(href.startsWith('/account')).toBe(false);
    const done = await person.postForm(
      `${pages}/password/reset`,
      {
        csrfToken: hidden(resetHtml, 'csrfToken'),
        token,
        password: newPassword,
        passwordRepeat: newPassword,
      },
      noReferrer,
    );
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Password changed — sign in');
    expect((await new Client(service.url).signIn('ada@example.com', newPassword)).status).toBe(200);
    // The "password changed" notice: its "this wasn't me" link leads to the lock page there.
    const notice = await smtp.mailTo('ada@example.com', 0, /password was changed/);
    const lockLink = linkIn(notice, `${pages}/lock`);
    const lockPage = await person.get(new URL(lockLink).pathname + new URL(lockLink).search);
    expect(lockPage.status).toBe(200);
    expect(actionsIn(await lockPage.text())).toEqual([`${pages}/lock`]);
  });

  it('the account page, its forms and their redirects live under the path; "/" links to it', async () => {
    const ada = new Client(service.url, sameOrigin(service));
    expect(await signedIn(ada, 'ada@example.com', newPassword)).toBe(true);
    const page = await ada.get(pages);
    expect(page.status).toBe(200);
    const html = await page.text();
    const actions = actionsIn(html);
    expect(actions).toContain(`${pages}/profile`);
    expect(actions).toContain(`${pages}/password/change`);
    expect(actions).toContain(`${pages}/email/change`);
    for (const action of actions)
      expect(action.startsWith(`${pages}/`) || action.startsWith('/api/auth/signout')).toBe(true);
    const saved = await ada.postForm(`${pages}/profile`, {
      csrfToken: hidden(html, 'csrfToken'),
      name: 'Ada L',
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(`${service.url}${pages}?done=profile`);
    // A refused form's address, opened again, is the page.
    const reopened = await ada.get(`${pages}/profile`);
    expect(reopened.headers.get('location')).toBe(`${service.url}${pages}`);
    expect(linksIn(await (await ada.get('/')).text())).toContain(pages);
  });

  it('sign-up, address change and invitation mails link under the path', async () => {
    const person = new Client(service.url);
    const signedUp = await postWithCsrf(person, '/api/account/signup', {
      email: 'cy@example.com',
      name: 'Cy',
      password,
    });
    expect(signedUp.status).toBe(202);
    const confirm = linkIn(await smtp.mailTo('cy@example.com', 0), `${pages}/signup/confirm`);
    expect(confirm.startsWith(`${service.url}${pages}/signup/confirm?token=`)).toBe(true);
    expect((await person.get(new URL(confirm).pathname + new URL(confirm).search)).status).toBe(
      200,
    );

    const bob = new Client(service.url);
    expect(await signedIn(bob, 'bob@example.com', password)).toBe(true);
    expect(
      (await postWithCsrf(bob, '/api/account/email/change', { email: 'robert@example.com' }))
        .status,
    ).toBe(202);
    const verify = linkIn(await smtp.mailTo('robert@example.com', 0), `${pages}/email/verify`);
    expect(verify.startsWith(`${service.url}${pages}/email/verify?token=`)).toBe(true);

    // The CLI, with the service's settings, builds the invitation link on the same path.
    const invited = await runNode(
      'gatehouse-cli.cjs',
      ['users', 'invite', '--email', 'dee@example.com', '--print-link'],
      { ...mailed.databaseEnv, AUTH_URL: service.url, ACCOUNT_PAGES_PATH: pages },
    );
    expect(invited.code).toBe(0);
    expect(invited.stdout).toContain(`${service.url}${pages}/invitation?token=`);
  });
});
