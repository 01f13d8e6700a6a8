import { describe, expect, it } from 'vitest';
import { startMailService } from '../account/account-service.js';
import { screensRun, chromiumSuite, screenVariants as variants } from '../helpers/chromium.js';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';

// Issue 19, item 5: the "this wasn't me" page in a real Chromium against the service in process.
// A password reset (done over HTTP) sends the notice; its lock link is opened in the browser,
// light, dark and a 390 px phone; screenshots in test-artifacts/e2e-browser/lock/ (gitignored)
// for a person to look at, the CSP holding.

const password = 'correct horse battery staple';
const newPassword = 'a brand new and long passphrase';

const post = postWithCsrf;

describe.skipIf(!screensRun)('"this wasn\'t me" in Chromium', () => {
  const suite = chromiumSuite('lock', () =>
    startMailService({ users: variants.map((v) => `${v.name}@example.com`), password }),
  );

  /** A reset over HTTP, then the notice's lock link. */
  async function lockLinkFor(email: string) {
    const { service, smtp } = suite.started;
    const client = new Client(service.url);
    let before = smtp.received.length;
    expect((await post(client, '/api/account/password/forgot', { email })).status).toBe(202);
    const resetMail = await smtp.mailTo(email, before);
    const resetLink = /https?:\/\/\S+\/account\/password\/reset\?token=[\w-]+/.exec(
      resetMail.parsed.text ?? '',
    )?.[0];
    const token = new URL(resetLink ?? '').searchParams.get('token') ?? '';
    before = smtp.received.length;
    const reset = await post(client, '/api/account/password/reset', {
      token,
      password: newPassword,
    });
    expect(reset.status).toBe(200);
    const notice = await smtp.mailTo(email, before);
    const link = /https?:\/\/\S+\/account\/lock\?token=[\w-]+/.exec(notice.parsed.text ?? '')?.[0];
    expect(link).toBeDefined();
    return link ?? '';
  }

  it.each(variants)(
    '$name: the notice\'s link → "Lock your account?" → button → locked; the link again says it is spent',
    async (variant) => {
      const email = `${variant.name}@example.com`;
      const link = await lockLinkFor(email);
      const { context, page, violations, shot } = await suite.open(variant);

      await page.goto(link);
      expect(await page.getByRole('heading').textContent()).toBe('Lock your account?');
      await shot('1-ask');
      await page.getByRole('button', { name: 'Lock my account' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Your account is locked');
      expect(await page.getByRole('status').textContent()).toContain('Your account is locked');
      await shot('2-locked');
      // The same link again: spent, said as the page opens, with no button to press.
      await page.goto(link);
      expect(await page.getByRole('alert').textContent()).toContain('not valid');
      expect(await page.getByRole('button', { name: 'Lock my account' }).count()).toBe(0);
      await shot('3-spent');

      // Sign-in is refused while the account is locked.
      await page.goto(`${suite.started.service.url}/api/auth/signin`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(newPassword);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForLoadState('load');
      expect(await page.getByRole('alert').count()).toBeGreaterThan(0);
      await shot('4-signin-refused');
      expect(violations).toEqual([]);
      await context.close();
    },
    60_000,
  );
});
