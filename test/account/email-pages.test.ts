import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { secretsIn } from '../helpers/mail-reading.js';
import {
  browserAccept,
  hidden,
  noticeOf,
  submitSignInForm,
  unescape,
} from '../pages/page-helpers.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';

/*
 * Verify and change e-mail as a browser without script does them (issue 19 items 3 and 6):
 * the account page's e-mail section and the mailed link's page, plain form posts over real
 * HTTP against the service in process, a loopback SMTP server, SQLite.
 */

const password = 'correct horse battery staple';

const browser = (service: AccountService) =>
  new Client(service.url, {
    accept: browserAccept,
    origin: service.url,
    'sec-fetch-site': 'same-origin',
  });

async function signedIn(service: AccountService, email: string) {
  const client = browser(service);
  expect((await submitSignInForm(client, { email, password })).status).toBe(302);
  return client;
}

async function accountPage(client: Client, path = '/account') {
  const response = await client.get(path);
  expect(response.status).toBe(200);
  return response.text();
}

async function submit(client: Client, action: string, fields: Record<string, string>) {
  const page = await accountPage(client);
  return client.postForm(action, { csrfToken: hidden(page, 'csrfToken'), ...fields });
}

/** Follows a 303 back to the account page and returns its notice. */
async function after(client: Client, response: Response) {
  expect(response.status).toBe(303);
  const location = new URL(response.headers.get('location') ?? '');
  return noticeOf(await accountPage(client, location.pathname + location.search));
}

/** What a browser does with the no-referrer link page: posts with `Origin: null`. */
const linkPost = { origin: 'null', 'sec-fetch-site': 'same-origin' };

describe('the e-mail pages (SQLite)', () => {
  let mailed: MailService;
  let service: AccountService;
  let smtp: MailService['smtp'];

  /** The link (and code) of the first mail to `to` after `before` whose subject matches. */
  async function mailTo(to: string, subject: RegExp, before: number) {
    const secrets = secretsIn(await smtp.mailTo(to, before, subject), '/account/email/verify');
    return { link: new URL(secrets.link), code: secrets.code };
  }

  beforeAll(async () => {
    mailed = await startMailService({
      users: ['ada', 'bob', 'cy'].map((name) => `${name}@example.com`),
      password,
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it('not verified: send again → mail → link page (button, nothing used) → confirmed', async () => {
    const ada = await signedIn(service, 'ada@example.com');
    const page = await accountPage(ada);
    expect(page).toContain('<h2 id="email-title">Email</h2>');
    expect(page).toContain('ada@example.com <span class="hint">(not verified yet)</span>');
    // Made by an operator, unverified: nothing was mailed yet, and the page does not say so.
    expect(page).not.toContain('We mailed this address');
    expect(page).toContain('This address is not confirmed yet.');
    expect(page).toContain('Mail me a confirmation link</button>');
    const before = smtp.received.length;
    const sent = await submit(ada, '/account/email/verification', {});
    expect(await after(ada, sent)).toEqual({
      role: 'status',
      text: 'We mailed your address a confirmation link. Open it and press the button.',
    });
    const { link } = await mailTo('ada@example.com', /Confirm your address/, before);
    // Now a link was mailed: the page says so, and offers to send it again.
    const mailedPage = await accountPage(ada);
    expect(mailedPage).toContain('We mailed this address a link to confirm it is yours.');
    expect(mailedPage).toContain('Send the confirmation mail again</button>');

    const person = browser(service);
    const linkPage = await person.get(link.pathname + link.search);
    expect(linkPage.status).toBe(200);
    expect(linkPage.headers.get('referrer-policy')).toBe('no-referrer');
    expect(linkPage.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await linkPage.text();
    expect(html).toContain('Confirm my address</button>');
    expect(await accountPage(ada)).toContain('(not verified yet)');
    const token = hidden(html, 'token');
    const done = await person.postForm(
      '/account/email/verify',
      { csrfToken: hidden(html, 'csrfToken'), token },
      linkPost,
    );
    expect(done.status).toBe(200);
    const doneHtml = unescape(await done.text());
    expect(doneHtml).toContain('Thank you: ada@example.com is confirmed as your address.');
    const verifiedPage = await accountPage(ada);
    expect(verifiedPage).toContain('ada@example.com <span class="hint">(verified)</span>');
    expect(verifiedPage).not.toContain('Send the confirmation mail again');

    // The link again: spent, said in words, with what to do.
    const spent = await person.postForm(
      '/account/email/verify',
      { csrfToken: hidden(html, 'csrfToken'), token },
      linkPost,
    );
    expect(spent.status).toBe(400);
    const spentHtml = unescape(await spent.text());
    expect(spentHtml).toContain('<title>Error: Confirm your address');
    expect(spentHtml).toContain(
      'This link or code is not valid: it may have expired or been used already. Sign in and ask for a new mail on your account page.',
    );
    // A foreign site's post is refused.
    const foreign = await person.postForm(
      '/account/email/verify',
      { csrfToken: hidden(html, 'csrfToken'), token },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
    );
    expect(foreign.status).toBe(403);
    // Already verified: the button's post says so, and no mail goes out.
    const quiet = smtp.received.length;
    const again = await submit(ada, '/account/email/verification', {});
    expect((await after(ada, again))?.text).toBe(
      'Your address is already verified: there is nothing to confirm.',
    );
    await sleep(300);
    expect(smtp.received.length).toBe(quiet);
  });

  it('the code form of the link page, on another device', async () => {
    const bob = await signedIn(service, 'bob@example.com');
    const before = smtp.received.length;
    await submit(bob, '/account/email/verification', {});
    const { code } = await mailTo('bob@example.com', /Confirm your address/, before);
    const phone = browser(service);
    const form = await (await phone.get('/account/email/verify')).text();
    expect(form).toContain('name="code"');
    expect(form).not.toContain('name="token"');
    const wrong = await phone.postForm(
      '/account/email/verify',
      { csrfToken: hidden(form, 'csrfToken'), email: 'bob@example.com', code: 'AAAA-AAAA' },
      linkPost,
    );
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('value="bob@example.com"');
    const done = await phone.postForm(
      '/account/email/verify',
      { csrfToken: hidden(form, 'csrfToken'), email: 'bob@example.com', code },
      linkPost,
    );
    expect(done.status).toBe(200);
    expect(await accountPage(bob)).toContain('(verified)');
  });

  it('change address: refusals in words, then mail → link page → "your address is now …"', async () => {
    const cy = await signedIn(service, 'cy@example.com');
    const other = await signedIn(service, 'cy@example.com');
    const wrongPassword = await submit(cy, '/account/email/change', {
      email: 'cy.new@example.com',
      currentPassword: 'not it at all',
    });
    expect(wrongPassword.status).toBe(403);
    const wrongHtml = unescape(await wrongPassword.text());
    expect(noticeOf(wrongHtml)?.text).toBe(
      'Your current password is not correct, so your address was not changed.',
    );
    expect(wrongHtml).toContain('value="cy.new@example.com"');
    const notAnAddress = await submit(cy, '/account/email/change', {
      email: 'cy at home',
      currentPassword: password,
    });
    expect(notAnAddress.status).toBe(422);
    expect(noticeOf(await notAnAddress.text())?.text).toBe(
      'Enter the new address, like name@example.com.',
    );
    const same = await submit(cy, '/account/email/change', {
      email: 'cy@example.com',
      currentPassword: password,
    });
    expect(same.status).toBe(422);
    expect(noticeOf(await same.text())?.text).toBe('That is already the address of your account.');

    const before = smtp.received.length;
    const asked = await submit(cy, '/account/email/change', {
      email: 'cy.new@example.com',
      currentPassword: password,
    });
    expect((await after(cy, asked))?.text).toMatch(/^We sent a link to the new address\./);
    const { link } = await mailTo('cy.new@example.com', /Confirm your new address/, before);
    expect(await accountPage(cy)).toContain('cy@example.com <span class="hint">');

    // Opened in the signed-in browser: that session goes on, the other one ends.
    const html = await (await cy.get(link.pathname + link.search)).text();
    const done = await cy.postForm(
      '/account/email/verify',
      { csrfToken: hidden(html, 'csrfToken'), token: hidden(html, 'token') },
      linkPost,
    );
    expect(done.status).toBe(200);
    const doneHtml = unescape(await done.text());
    expect(doneHtml).toContain('<title>Address changed');
    expect(doneHtml).toContain('Your address is now cy.new@example.com.');
    expect(await accountPage(cy)).toContain(
      'cy.new@example.com <span class="hint">(verified)</span>',
    );
    expect(await other.session()).toBeNull();
  });
});
