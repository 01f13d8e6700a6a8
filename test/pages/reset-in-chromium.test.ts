import { describe, expect, it } from 'vitest';
import { startMailService } from '../account/account-service.js';
import { screensRun, chromiumSuite, screenVariants as variants } from '../helpers/chromium.js';

// Issue 19, item 2: password reset in a real Chromium against the service in process, with the
// mail read from a loopback SMTP server, light, dark and a 390 px phone; screenshots in
// test-artifacts/e2e-browser/reset/ (gitignored) for a person to look at, the CSP holding.

const password = 'correct horse battery staple';

describe.skipIf(!screensRun)('password reset in Chromium', () => {
  const suite = chromiumSuite('reset', () =>
    startMailService({ users: variants.map((v) => `${v.name}@example.com`), password }),
  );

  it.each(variants)(
    '$name: sign-in → "Forgot your password?" → mail → link → new password → sign in',
    async (variant) => {
      const email = `${variant.name}@example.com`;
      const { service, smtp } = suite.started;
      const { context, page, violations, shot } = await suite.open(variant);

      await page.goto(`${service.url}/api/auth/signin`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByLabel('Email').fill(email);
      await shot('1-forgot');
      const before = smtp.received.length;
      await page.getByRole('button', { name: 'Send the link' }).click();
      expect(await page.getByRole('status').textContent()).toContain('If an account exists');
      await shot('2-sent');

      const mail = await smtp.mailTo(email, before);
      const link = /https?:\/\/\S+\/account\/password\/reset\?token=[\w-]+/.exec(
        mail.parsed.text ?? '',
      )?.[0];
      expect(link).toBeDefined();
      await page.goto(link ?? '');
      // Long enough for the field's minlength, so the server's policy answers.
      await page.locator('#password').fill('password1234567');
      await page.locator('#passwordRepeat').fill('password1234567');
      await page.getByRole('button', { name: 'Set the new password' }).first().click();
      expect(await page.getByRole('alert').textContent()).toMatch(/\w/);
      await shot('3-weak');
      await page.locator('summary').click();
      await shot('4-code-open');
      await page.locator('#password').fill('a brand new and long passphrase');
      await page.locator('#passwordRepeat').fill('a brand new and long passphrase');
      await page.getByRole('button', { name: 'Set the new password' }).first().click();
      expect(await page.getByRole('heading').textContent()).toBe('Password changed — sign in');
      await shot('5-done');
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('a brand new and long passphrase');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForLoadState('load');
      const session = await page.evaluate(() => document.body.innerText);
      await shot('6-signed-in');
      expect(session).toContain(email);
      expect(violations).toEqual([]);
      await context.close();
    },
    60_000,
  );
});
