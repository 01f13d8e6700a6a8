import { describe, expect, it } from 'vitest';
import { startMailService } from '../account/account-service.js';
import { screensRun, chromiumSuite, screenVariants as variants } from '../helpers/chromium.js';
import { linkIn, scanEveryLink } from '../helpers/mail-reading.js';

// Issue 19, items 4 and 6: open sign-up in a real Chromium against the service in process
// (SIGNUP=open, REQUIRE_VERIFIED_EMAIL=true), the mail read from a loopback SMTP server, a
// link scanner opening every link before the person does,
// light, dark and a 390 px phone; screenshots in test-artifacts/e2e-browser/signup/
// (gitignored) for a person to look at, the CSP holding.

const password = 'correct horse battery staple';

describe.skipIf(!screensRun)('open sign-up in Chromium', () => {
  const suite = chromiumSuite('signup', () =>
    startMailService({ env: { SIGNUP: 'open', REQUIRE_VERIFIED_EMAIL: 'true' } }),
  );

  it.each(variants)(
    '$name: sign-in → "Create an account" → refusal → "check your inbox" → no account before the confirmation → the mail\'s link → a password chosen there (two that differ refused) → account created → signed in',
    async (variant) => {
      const { service, smtp } = suite.started;
      const email = `${variant.name}.person@example.com`;
      const { context, page, violations, shot, close } = await suite.open(variant);

      await page.goto(`${service.url}/api/auth/signin`);
      await shot('1-signin-link');
      await page.getByRole('link', { name: 'Create an account' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Create an account');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
      await page.getByLabel('Password', { exact: true }).fill('password1234567');
      await page.getByLabel('Repeat the password').fill('password1234567');
      await shot('2-form');
      await page.getByRole('button', { name: 'Create the account' }).click();
      expect(await page.getByRole('alert').textContent()).toContain('commonly used');
      expect(await page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).toBe(
        'true',
      );
      expect(await page.getByLabel('Email').inputValue()).toBe(email);
      await shot('3-weak');
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByLabel('Repeat the password').fill(password);
      const before = smtp.received.length;
      await page.getByRole('button', { name: 'Create the account' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Check your inbox');
      expect(await page.getByRole('status').textContent()).toContain(email);
      await shot('4-check-inbox');

      const mail = await smtp.mailTo(email, before, /Confirm your address/);
      expect(mail.parsed.text).toMatch(/\/account\/signup\/confirm\?token=[\w-]+/);
      expect(mail.parsed.text).not.toContain('Ada Lovelace');

      // Before the confirmation there is no account: the usual wrong-password refusal.
      await page.getByRole('link', { name: 'Back to sign in' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForLoadState('load');
      expect(new URL(page.url()).searchParams.get('code')).toBe('credentials');
      expect((await context.cookies()).some((c) => c.name.includes('session-token'))).toBe(false);

      // A link scanner opens the link first: it makes nothing.
      expect(await scanEveryLink(smtp)).toBeGreaterThan(0);

      // The mail's link: a page where the mailbox's holder chooses the account's password.
      await page.goto(linkIn(mail, '/account/signup/confirm'));
      expect(await page.getByRole('heading').textContent()).toBe('Confirm your address');
      expect(await page.locator('main').textContent()).toContain(email);
      await shot('5-confirm');
      // The two fields differ: said, and nothing is made.
      await page.locator('#password').fill(password);
      await page.locator('#passwordRepeat').fill(`${password} again`);
      await page.getByRole('button', { name: 'Create the account' }).click();
      expect(await page.getByRole('alert').textContent()).toContain('differ');
      expect(await page.locator('#passwordRepeat').getAttribute('aria-invalid')).toBe('true');
      await shot('6-passwords-differ');
      await page.getByLabel('Your name').fill('Grace Hopper');
      await page.locator('#password').fill(password);
      await page.locator('#passwordRepeat').fill(password);
      await page.getByRole('button', { name: 'Create the account' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Account created');
      expect((await context.cookies()).some((c) => c.name.includes('session-token'))).toBe(false);
      await shot('7-created');
      await page.getByRole('link', { name: 'Sign in' }).click();
      expect(new URL(page.url()).pathname).toBe('/api/auth/signin');

      // Now the same password signs in.
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForLoadState('load');
      expect((await context.cookies()).some((c) => c.name.includes('session-token'))).toBe(true);
      await page.goto(`${service.url}/account`);
      expect(await page.locator('main').textContent()).toContain(email);
      expect(await page.locator('main').textContent()).not.toContain('not verified');
      await shot('8-account');
      expect(violations).toEqual([]);
      await close();
    },
    60_000,
  );
});
