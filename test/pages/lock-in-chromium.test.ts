import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serviceDatabase,
  startAccountService,
  type AccountService,
} from '../account/account-service.js';
import { Client } from '../helpers/client.js';
import { LoopbackSmtp } from '../helpers/smtp.js';

// Issue 19, item 5: the "this wasn't me" page in a real Chromium against the built service.
// A password reset (done over HTTP) sends the notice; its lock link is opened in the browser,
// light, dark and a 390 px phone; screenshots in test-artifacts/e2e-browser/lock/ (gitignored)
// for a person to look at, the CSP holding.

const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
const newPassword = 'a brand new and long passphrase';
const artifacts = path.resolve('test-artifacts', 'e2e-browser', 'lock');

const variants = [
  { name: 'light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const },
  { name: 'dark', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const },
  { name: 'phone', viewport: { width: 390, height: 844 }, colorScheme: 'light' as const },
];

async function post(client: Client, route: string, body: Record<string, unknown>) {
  const csrfToken = await client.csrfToken();
  return client.request(route, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ csrfToken, ...body }),
  });
}

describe.skipIf(!fs.existsSync(chromiumPath))('"this wasn\'t me" in Chromium', () => {
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

  /** A reset over HTTP, then the notice's lock link. */
  async function lockLinkFor(email: string) {
    const client = new Client(service.url);
    let before = smtp.received.length;
    expect((await post(client, '/api/account/password/forgot', { email })).status).toBe(202);
    await smtp.waitFor(before + 1);
    const resetMail = smtp.received.slice(before).find((m) => m.envelopeTo.includes(email));
    const resetLink = /https?:\/\/\S+\/account\/password\/reset\?token=[\w-]+/.exec(
      resetMail?.parsed.text ?? '',
    )?.[0];
    const token = new URL(resetLink ?? '').searchParams.get('token') ?? '';
    before = smtp.received.length;
    const reset = await post(client, '/api/account/password/reset', {
      token,
      password: newPassword,
    });
    expect(reset.status).toBe(200);
    await smtp.waitFor(before + 1);
    const notice = smtp.received.slice(before).find((m) => m.envelopeTo.includes(email));
    const link = /https?:\/\/\S+\/account\/lock\?token=[\w-]+/.exec(notice?.parsed.text ?? '')?.[0];
    expect(link).toBeDefined();
    return link ?? '';
  }

  it.each(variants)(
    '$name: the notice\'s link → "Lock your account?" → button → locked; a second press explains',
    async (variant) => {
      const email = `${variant.name}@example.com`;
      const link = await lockLinkFor(email);
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

      await page.goto(link);
      expect(await page.getByRole('heading').textContent()).toBe('Lock your account?');
      await shot('1-ask');
      await page.getByRole('button', { name: 'Lock my account' }).click();
      expect(await page.getByRole('heading').textContent()).toBe('Your account is locked');
      expect(await page.getByRole('status').textContent()).toContain('Your account is locked');
      await shot('2-locked');
      // The same link again (back, then the button): spent.
      await page.goto(link);
      await page.getByRole('button', { name: 'Lock my account' }).click();
      expect(await page.getByRole('alert').textContent()).toContain('not valid');
      await shot('3-spent');

      // Sign-in is refused while the account is locked.
      await page.goto(`${service.url}/api/auth/signin`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(newPassword);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForLoadState('load');
      expect(await page.getByRole('alert').count()).toBeGreaterThan(0);
      await shot('4-signin-refused');
      expect(violations).toEqual([]);
      await context.close();
    },
    60_000,
  );
});
