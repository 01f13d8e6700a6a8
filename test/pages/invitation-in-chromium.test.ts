import { describe, expect, it } from 'vitest';
import { invitationLinkOf, startInviteMailService } from '../account/invitation-helpers.js';
import { screensRun, chromiumSuite, screenVariants as variants } from '../helpers/chromium.js';

// Issue 19, items 4 and 6: an invitation in a real Chromium with JavaScript off, against the
// service in process: `gatehouse users invite` mails the link (loopback SMTP), the person opens it,
// a weak password is refused, the account is created, they sign in, and the spent link
// explains itself; light, dark and a 390 px phone; screenshots in
// test-artifacts/e2e-browser/invitation/ (gitignored) for a person to look at, the CSP holding.

const password = 'correct horse battery staple';

describe.skipIf(!screensRun)('an invitation in Chromium', () => {
  const suite = chromiumSuite('invitation', () => startInviteMailService());

  it.each(variants)(
    '$name: mailed link → the invitation → weak password refused → account created → sign in → the spent link',
    async (variant) => {
      const { service, smtp } = suite.started;
      const email = `${variant.name}@example.com`;
      const before = smtp.received.length;
      const invited = await service.invite(['--email', email, '--name', 'Ada Lovelace']);
      expect(invited.code).toBe(0);
      const link = invitationLinkOf(await smtp.mailTo(email, before, /invited/));

      const { page, violations, shot, close } = await suite.open(variant, {
        javaScriptEnabled: false,
      });

      await page.goto(link);
      expect(await page.getByRole('heading').textContent()).toBe('Create your account');
      expect(await page.locator('.lead').textContent()).toBe(
        `You're invited to Gatehouse as ${email}. Choose your name and a password.`,
      );
      expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Ada Lovelace');
      await shot('1-invitation');
      // Long enough for the field's minlength, so the server's policy answers.
      await page.getByLabel('Password', { exact: true }).fill('password1234567');
      await page.getByLabel('Repeat the password').fill('password1234567');
      await page.getByRole('button', { name: 'Create my account' }).click();
      expect(await page.getByRole('alert').textContent()).toMatch(/commonly used/);
      await shot('2-weak');
      await page.getByLabel('Name', { exact: true }).fill('Ada');
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByLabel('Repeat the password').fill(password);
      await page.getByRole('button', { name: 'Create my account' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Account created — sign in');
      await shot('3-accepted');

      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForLoadState('load');
      expect(await page.evaluate(() => document.body.innerText)).toContain(email);
      await shot('4-signed-in');

      await page.goto(link);
      expect(await page.getByRole('heading').textContent()).toBe('This invitation cannot be used');
      await shot('5-spent');
      expect(violations).toEqual([]);
      await close();
    },
    60_000,
  );
});
