import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serviceDatabase,
  startAccountService,
  type AccountService,
} from '../account/account-service.js';
import { LoopbackSmtp } from '../helpers/smtp.js';

// Issue 19, item 2: password reset in a real Chromium against the built service, with the
// mail read from a loopback SMTP server, light, dark and a 390 px phone; screenshots in
// test-artifacts/e2e-browser/reset/ (gitignored) for a person to look at, the CSP holding.

const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
const artifacts = path.resolve('test-artifacts', 'e2e-browser', 'reset');

const variants = [
  { name: 'light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const },
  { name: 'dark', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const },
  { name: 'phone', viewport: { width: 390, height: 844 }, colorScheme: 'light' as const },
];

describe.skipIf(!fs.existsSync(chromiumPath))('password reset in Chromium', () => {
  let service: AccountService;
  let smtp: LoopbackSmtp;
  let browser: Browser;
  let dispose: () => Promise<void>;

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

  it.each(variants)(
    '$name: sign-in → "Forgot your password?" → mail → link → new password → sign in',
    async (variant) => {
      const email = `${variant.name}@example.com`;
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

      await page.goto(`${service.url}/api/auth/signin`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByLabel('Email').fill(email);
      await shot('1-forgot');
      const before = smtp.received.length;
      await page.getByRole('button', { name: 'Send the link' }).click();
      expect(await page.getByRole('status').textContent()).toContain('If an account exists');
      await shot('2-sent');

      await smtp.waitFor(before + 1);
      const mail = smtp.received.slice(before).find((m) => m.envelopeTo.includes(email));
      const link = /https?:\/\/\S+\/account\/password\/reset\?token=[\w-]+/.exec(
        mail?.parsed.text ?? '',
      )?.[0];
      expect(link).toBeDefined();
      await page.goto(link ?? '');
      await page.locator('#password').fill('short');
      await page.getByRole('button', { name: 'Set the new password' }).first().click();
      expect(await page.getByRole('alert').textContent()).toMatch(/\w/);
      await shot('3-weak');
      await page.locator('summary').click();
      await shot('4-code-open');
      await page.locator('#password').fill('a brand new and long passphrase');
      await page.getByRole('button', { name: 'Set the new password' }).first().click();
      expect(await page.getByRole('heading').textContent()).toBe('Password changed — sign in');
      await shot('5-done');
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('a brand new and long passphrase');
      await page.getByRole('button', { name: 'Sign in' }).click();
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
