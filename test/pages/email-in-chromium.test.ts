import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startMailService } from '../account/account-service.js';
import {
  expectPaintedFor,
  screensRun,
  chromiumSuite,
  screenVariants as variants,
} from '../helpers/chromium.js';
import { linkIn } from '../helpers/mail-reading.js';

// Issue 19, items 3 and 6: verify e-mail and change e-mail in a real Chromium against the built
// service, the mails read from a loopback SMTP server, light, dark and a 390 px phone;
// screenshots in test-artifacts/e2e-browser/email/ (gitignored) for a person to look at, the
// CSP holding.

const password = 'correct horse battery staple';

describe.skipIf(!screensRun)('verify and change e-mail in Chromium', () => {
  const suite = chromiumSuite('email', () =>
    startMailService({ users: variants.map((v) => `${v.name}@example.com`), password }),
  );

  /** The link of the first mail to `to` after `before` whose subject matches. */
  const linkTo = async (to: string, subject: RegExp, before: number) =>
    linkIn(await suite.started.smtp.mailTo(to, before, subject), '/account/email/verify');

  async function signIn(page: Page, email: string) {
    await page.goto(`${suite.started.service.url}/account`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${suite.started.service.url}/account`);
  }

  it.each(variants)(
    '$name: account page → send the mail again → link → button → confirmed',
    async (variant) => {
      const email = `${variant.name}@example.com`;
      const { context, page, violations, shot } = await suite.open(variant);
      await signIn(page, email);
      expect(await page.locator('main').innerText()).toContain('not verified yet');
      await shot('1-not-verified');
      const before = suite.started.smtp.received.length;
      await page.getByRole('button', { name: 'Mail me a confirmation link' }).click();
      expect(await page.getByRole('status').textContent()).toContain(
        'We mailed your address a confirmation link',
      );
      await shot('2-sent');
      const link = await linkTo(email, /Confirm your address/, before);
      await page.goto(link);
      await expectPaintedFor(page, variant);
      await shot('3-link');
      await page.locator('summary').click();
      await shot('4-link-code-open');
      await page.getByRole('button', { name: 'Confirm my address' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Address confirmed');
      await shot('5-confirmed');
      await page.getByRole('link', { name: 'Go to your account' }).click();
      expect(await page.locator('main').innerText()).toContain(`${email} (verified)`);
      await shot('6-verified');
      // The same link again: spent, said in words as the page opens, with what to do next.
      await page.goto(link);
      expect(await page.getByRole('button', { name: 'Confirm my address' }).count()).toBe(0);
      expect(await page.getByRole('alert').textContent()).toContain(
        'ask for a new mail on your account page',
      );
      await shot('6b-link-spent');
      expect(violations).toEqual([]);
      await context.close();
    },
    60_000,
  );

  it.each(variants)(
    '$name: change address → mail to the new one → link → button → "your address is now …"',
    async (variant) => {
      const email = `${variant.name}@example.com`;
      const newEmail = `${variant.name}.new@example.com`;
      const { context, page, violations, shot } = await suite.open(variant);
      await signIn(page, email);
      await page.getByText('Change your address').click();
      await page.getByLabel('New address').fill(newEmail);
      await page.getByLabel('Current password').first().fill('not my password');
      await page.getByRole('button', { name: 'Change address' }).click();
      expect(await page.getByRole('alert').textContent()).toContain(
        'Your current password is not correct',
      );
      await shot('7-change-wrong-password');
      const before = suite.started.smtp.received.length;
      await page.getByLabel('Current password').first().fill(password);
      await page.getByRole('button', { name: 'Change address' }).click();
      expect(await page.getByRole('status').textContent()).toContain(
        'We sent a link to the new address',
      );
      await expectPaintedFor(page, variant);
      await shot('8-change-sent');
      await page.goto(await linkTo(newEmail, /Confirm your new address/, before));
      // The new address's holder is told what the button does: an account moves here.
      expect(await page.locator('main').innerText()).toContain(
        'Press the button to move an account to this address.',
      );
      await shot('9-change-link');
      await page.getByRole('button', { name: 'Confirm my address' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Address changed');
      expect(await page.getByRole('status').textContent()).toContain(
        `Your address is now ${newEmail}.`,
      );
      await shot('10-changed');
      await page.getByRole('link', { name: 'Go to your account' }).click();
      expect(await page.locator('main').innerText()).toContain(`${newEmail} (verified)`);
      await shot('11-account-new-address');
      expect(violations).toEqual([]);
      await context.close();
    },
    60_000,
  );
});
