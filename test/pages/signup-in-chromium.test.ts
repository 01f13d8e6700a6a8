import { describe, expect, it } from 'vitest';
import { startMailService } from '../account/account-service.js';
import { hasChromium, chromiumSuite, screenVariants as variants } from '../helpers/chromium.js';
import { linkIn } from '../helpers/mail-reading.js';

// Issue 19, items 4 and 6: open sign-up in a real Chromium against the built service
// (SIGNUP=open, REQUIRE_VERIFIED_EMAIL=true), the mail read from a loopback SMTP server,
// light, dark and a 390 px phone; screenshots in test-artifacts/e2e-browser/signup/
// (gitignored) for a person to look at, the CSP holding.

const password = 'correct horse battery staple';

describe.skipIf(!hasChromium)('open sign-up in Chromium', () => {
  const suite = chromiumSuite('signup', () =>
    startMailService({ env: { SIGNUP: 'open', REQUIRE_VERIFIED_EMAIL: 'true' } }),
  );

  it.each(variants)(
    '$name: sign-in → "Create an account" → refusal → "check your inbox" → sign-in refused until confirmed → the newest mail\'s link → confirmed → signed in',
    async (variant) => {
      const { service, smtp } = suite.started;
      const email = `${variant.name}.person@example.com`;
      const { context, page, violations, shot, close } = await suite.open(variant);

      await page.goto(`${service.url}/api/auth/signin`);
      await shot('1-signin-link');
      await page.getByRole('link', { name: 'Create an account' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Create an account');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Name').fill('Ada Lovelace');
      await page.getByLabel('Password').fill('password1234567');
      await shot('2-form');
      await page.getByRole('button', { name: 'Create the account' }).click();
      expect(await page.getByRole('alert').textContent()).toContain('commonly used');
      expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByLabel('Email').inputValue()).toBe(email);
      await shot('3-weak');
      await page.getByLabel('Password').fill(password);
      const before = smtp.received.length;
      await page.getByRole('button', { name: 'Create the account' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Check your inbox');
      expect(await page.getByRole('status').textContent()).toContain(email);
      await shot('4-check-inbox');

      await smtp.waitFor(before + 1);
      const mail = smtp.received.slice(before).find((m) => m.envelopeTo.includes(email));
      expect(mail?.parsed.subject).toMatch(/Confirm your address/);
      expect(mail?.parsed.text).toMatch(/\/account\/email\/verify\?token=[\w-]+/);

      await page.getByRole('link', { name: 'Back to sign in' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      const beforeRefusal = smtp.received.length;
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForLoadState('load');
      expect(new URL(page.url()).searchParams.get('code')).toBe('email_unverified');
      expect(await page.getByRole('alert').textContent()).toContain(
        `Confirm your address first: we have sent a new link to ${email}.`,
      );
      await shot('5-refused-unverified');
      const fresh = await smtp.mailTo(email, beforeRefusal, /Confirm your address/);
      expect((await context.cookies()).some((c) => c.name.includes('session-token'))).toBe(false);

      // The newest mail's link, as the person opens it: a button, then confirmed.
      await page.goto(linkIn(fresh, '/account/email/verify'));
      expect(await page.getByRole('heading').textContent()).toBe('Confirm your address');
      await shot('6-confirm');
      await page.getByRole('button', { name: 'Confirm my address' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Address confirmed');
      await shot('7-confirmed');

      // Now the same password signs in.
      await page.goto(`${service.url}/api/auth/signin`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
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
