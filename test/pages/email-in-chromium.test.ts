import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serviceDatabase,
  startAccountService,
  type AccountService,
} from '../account/account-service.js';
import { LoopbackSmtp } from '../helpers/smtp.js';

// Issue 19, items 3 and 6: verify e-mail and change e-mail in a real Chromium against the built
// service, the mails read from a loopback SMTP server, light, dark and a 390 px phone;
// screenshots in test-artifacts/e2e-browser/email/ (gitignored) for a person to look at, the
// CSP holding.

const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
const artifacts = path.resolve('test-artifacts', 'e2e-browser', 'email');

const variants = [
  { name: 'light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const },
  { name: 'dark', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const },
  { name: 'phone', viewport: { width: 390, height: 844 }, colorScheme: 'light' as const },
];

describe.skipIf(!fs.existsSync(chromiumPath))('verify and change e-mail in Chromium', () => {
  let service: AccountService;
  let smtp: LoopbackSmtp;
  let browser: Browser;
  let dispose: () => Promise<void>;

  /** The link of the first mail to `to` after `before` whose subject matches. */
  async function linkTo(to: string, subject: RegExp, before: number): Promise<string> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const mail = smtp.received
        .slice(before)
        .find((m) => m.envelopeTo.includes(to) && subject.test(m.parsed.subject ?? ''));
      const link = /https?:\/\/\S+\/account\/email\/verify\?token=[\w-]+/.exec(
        mail?.parsed.text ?? '',
      )?.[0];
      if (link !== undefined) return link;
      if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject}`);
      await sleep(25);
    }
  }

  beforeAll(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    smtp = await LoopbackSmtp.start('up');
    const database = await serviceDatabase('sqlite');
    dispose = database.dispose;
    [service, browser] = await Promise.all([
      startAccountService(database.env, {
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Acme <no-reply@acme.test>',
      }),
      chromium.launch({
        executablePath: chromiumPath,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      }),
    ]);
    for (const variant of variants) {
      await service.addUser(`${variant.name}@example.com`, password);
    }
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await smtp?.close();
    await dispose?.();
  });

  async function open(variant: (typeof variants)[number]) {
    const context = await browser.newContext({
      viewport: variant.viewport,
      colorScheme: variant.colorScheme,
    });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text());
    });
    const shot = (step: string) =>
      page.screenshot({
        path: path.join(artifacts, `${variant.name}-${step}.png`),
        fullPage: true,
      });
    return { context, page, violations, shot };
  }

  async function signIn(page: Page, email: string) {
    await page.goto(`${service.url}/account`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${service.url}/account`);
  }

  it.each(variants)(
    '$name: account page → send the mail again → link → button → confirmed',
    async (variant) => {
      const email = `${variant.name}@example.com`;
      const { context, page, violations, shot } = await open(variant);
      await signIn(page, email);
      expect(await page.locator('main').innerText()).toContain('not verified yet');
      await shot('1-not-verified');
      const before = smtp.received.length;
      await page.getByRole('button', { name: 'Send the confirmation mail again' }).click();
      expect(await page.getByRole('status').textContent()).toContain(
        'We sent the confirmation mail again',
      );
      await shot('2-sent');
      const link = await linkTo(email, /Confirm your address/, before);
      await page.goto(link);
      await shot('3-link');
      await page.locator('summary').click();
      await shot('4-link-code-open');
      await page.getByRole('button', { name: 'Confirm my address' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Address confirmed');
      await shot('5-confirmed');
      await page.getByRole('link', { name: 'Go to your account' }).click();
      expect(await page.locator('main').innerText()).toContain(`${email} (verified)`);
      await shot('6-verified');
      // The same link again: spent, said in words, with what to do next.
      await page.goto(link);
      await page.getByRole('button', { name: 'Confirm my address' }).click();
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
      const { context, page, violations, shot } = await open(variant);
      await signIn(page, email);
      await page.getByText('Change your address').click();
      await page.getByLabel('New address').fill(newEmail);
      await page.getByLabel('Current password').first().fill('not my password');
      await page.getByRole('button', { name: 'Change address' }).click();
      expect(await page.getByRole('alert').textContent()).toContain(
        'Your current password is not correct',
      );
      await shot('7-change-wrong-password');
      const before = smtp.received.length;
      await page.getByLabel('Current password').first().fill(password);
      await page.getByRole('button', { name: 'Change address' }).click();
      expect(await page.getByRole('status').textContent()).toContain(
        'We sent a link to the new address',
      );
      await shot('8-change-sent');
      await page.goto(await linkTo(newEmail, /Confirm your new address/, before));
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
