import { describe, expect, it } from 'vitest';
import { startMailService } from '../account/account-service.js';
import {
  chromiumSuite,
  expectPaintedFor,
  screensRun,
  screenVariants as variants,
} from '../helpers/chromium.js';

// Issue 40, items 1 and 2: sign-in by e-mail in a real Chromium without script against the
// service in process, the mails read from a loopback SMTP server; light, dark and a 390 px
// phone; screenshots in test-artifacts/e2e-browser/email-signin/ (gitignored) for a person to
// look at, the CSP holding. The sign-in page's button, "check your inbox" with the code form,
// a wrong code, the right one; then the link in another browser: its page, its button.

const password = 'correct horse battery staple';

describe.skipIf(!screensRun)('sign-in by e-mail in Chromium', () => {
  const suite = chromiumSuite('email-signin', () =>
    startMailService({
      users: variants.map((v) => `${v.name}@example.com`),
      password,
      env: { EMAIL_SIGNIN: 'on' },
    }),
  );

  it.each(variants)(
    '$name: "Email me a sign-in link" → check your inbox → a wrong code → the right code signs in; the link in another browser: its button signs in',
    async (variant) => {
      const { service, smtp } = suite.started;
      const email = `${variant.name}@example.com`;
      const { context, page, violations, shot } = await suite.open(variant, {
        javaScriptEnabled: false,
      });
      await page.goto(`${service.url}/api/auth/signin`);
      await expectPaintedFor(page, variant);
      await shot('1-signin');
      await page.getByLabel('Email').fill(email);
      const since = smtp.received.length;
      await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
      await page.waitForURL(`${service.url}/api/auth/verify-request?provider=email&type=email`);
      expect(await page.getByRole('heading').textContent()).toBe('Check your inbox');
      expect(await page.locator('main').innerText()).toContain(email);
      await expectPaintedFor(page, variant);
      await shot('2-check-inbox');
      const mail = await smtp.mailTo(email, since);
      const text = mail.parsed.text ?? '';
      const code = /enter this code on the page: ([A-Z0-9]+)/.exec(text)?.[1] ?? '';
      const link = /https?:\/\/\S+\/api\/auth\/callback\/email\?\S+/.exec(text)?.[0] ?? '';

      await page.getByLabel('Code from the mail').fill('WRONG234');
      await page.getByRole('button', { name: 'Sign in with the code' }).click();
      await page.waitForURL(/code=email_code_invalid/);
      expect(await page.getByRole('alert').textContent()).toContain('That code is not right');
      await expectPaintedFor(page, variant);
      await shot('3-wrong-code');
      await page.getByLabel('Code from the mail').fill(code);
      await page.getByRole('button', { name: 'Sign in with the code' }).click();
      await page.waitForURL(`${service.url}/`);
      expect(await page.locator('main').innerText()).toContain(email);
      await shot('4-signed-in');
      await context.close();

      // The link, in another browser (a phone that opened the mail): asked for again.
      const before = smtp.received.length;
      const other = await suite.open(variant, { javaScriptEnabled: false });
      await other.page.goto(`${service.url}/api/auth/signin`);
      await other.page.getByLabel('Email').fill(email);
      await other.page.getByRole('button', { name: 'Email me a sign-in link' }).click();
      await other.page.waitForURL(/verify-request/);
      const second = await smtp.mailTo(email, before);
      const secondLink = /https?:\/\/\S+\/api\/auth\/callback\/email\?\S+/.exec(
        second.parsed.text ?? '',
      )?.[0];
      expect(secondLink).toBeDefined();
      const reader = await suite.open(variant, { javaScriptEnabled: false });
      await reader.page.goto(secondLink ?? '');
      expect(await reader.page.getByRole('heading').textContent()).toBe('Sign in to Gatehouse');
      await expectPaintedFor(reader.page, variant);
      await reader.shot('5-link');
      await reader.page.getByRole('button', { name: 'Sign in' }).click();
      await reader.page.waitForURL(`${service.url}/`);
      expect(await reader.page.locator('main').innerText()).toContain(email);
      // The first mail's link was spent with its code.
      await reader.page.goto(link);
      expect(await reader.page.getByRole('heading').textContent()).toBe('Sign-in link not valid');
      await reader.shot('6-link-spent');
      expect([...violations, ...other.violations, ...reader.violations]).toEqual([]);
      await other.close();
      await reader.close();
    },
    60_000,
  );
});
