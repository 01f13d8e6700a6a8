import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectPaintedFor,
  screensRun,
  launchChromium,
  openPage,
  screenVariants as variants,
} from '../helpers/chromium.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

// Issue 18, item 5: every state of Gatehouse's own pages in a real Chromium, light, dark
// (prefers-color-scheme) and on a 390 px phone, screenshotted for a person to look at
// (test-artifacts/e2e-browser/site/, gitignored), with the CSP holding in each.

const password = 'correct horse battery staple';
const artifacts = path.resolve('test-artifacts', 'e2e-browser', 'site');

async function signIn(page: Page, origin: string, email = 'ada@example.com', secret = password) {
  await page.goto(`${origin}/api/auth/signin`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(secret);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

describe.skipIf(!screensRun)('the pages in every state, light, dark and phone', () => {
  let server: TestServer;
  let browser: Browser;
  // Another origin (another port), as an app beside Gatehouse without AUTH_URL would be.
  let app: http.Server;
  let appOrigin: string;
  beforeAll(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    [server, browser] = await Promise.all([startServer(), launchChromium()]);
    await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
    app = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!DOCTYPE html><title>App</title>
<form method="post" action="${server.url}/api/auth/callback/credentials">
<input name="csrfToken" value="x"><input name="email" value="ada@example.com">
<input name="password" type="password" value="${password}"><button>Sign in</button></form>`);
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => app?.close(resolve));
  });

  /** Each state: how to reach it, and what must be on the screen once there. */
  const states: [name: string, reach: (page: Page) => Promise<void>][] = [
    [
      'signin-empty',
      async (page) => {
        await page.goto(`${server.url}/api/auth/signin`);
        await expect(page.title()).resolves.toBe('Sign in to Gatehouse');
      },
    ],
    [
      'signin-failed-email-kept',
      async (page) => {
        await signIn(page, server.url, 'ada@example.com', 'not the password at all');
        await page.waitForURL(/error=CredentialsSignin&code=credentials$/);
        await expect(page.getByLabel('Email').inputValue()).resolves.toBe('ada@example.com');
        await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('password');
        await expect(page.getByRole('alert').innerText()).resolves.toMatch(/^Wrong email/);
      },
    ],
    [
      'signin-signed-in-greeting',
      async (page) => {
        await signIn(page, server.url);
        await page.waitForURL(`${server.url}/`);
        await page.goto(`${server.url}/api/auth/signin`);
        await expect(page.locator('#who').innerText()).resolves.toBe(
          'Signed in as Ada Lovelace (ada@example.com)',
        );
        await expect(page.getByRole('link', { name: 'Continue' }).isVisible()).resolves.toBe(true);
        // The form to switch accounts is folded until asked for.
        await expect(page.getByLabel('Email').isVisible()).resolves.toBe(false);
      },
    ],
    [
      'signin-signed-in-switch-open',
      async (page) => {
        await signIn(page, server.url);
        await page.waitForURL(`${server.url}/`);
        await page.goto(`${server.url}/api/auth/signin`);
        await page.getByText('Sign in as someone else').click();
        await expect(page.getByLabel('Email').isVisible()).resolves.toBe(true);
      },
    ],
    [
      'signout-signed-in',
      async (page) => {
        await signIn(page, server.url);
        await page.waitForURL(`${server.url}/`);
        await page.goto(`${server.url}/api/auth/signout`);
        await expect(page.title()).resolves.toBe('Sign out of Gatehouse?');
      },
    ],
    [
      'signout-nobody',
      async (page) => {
        await page.goto(`${server.url}/api/auth/signout`);
        await expect(page.locator('h1').innerText()).resolves.toBe('You are not signed in');
      },
    ],
    [
      'home-signed-in',
      async (page) => {
        await signIn(page, server.url);
        await page.waitForURL(`${server.url}/`);
        await expect(page.locator('#who').innerText()).resolves.toBe(
          'Signed in as Ada Lovelace (ada@example.com)',
        );
      },
    ],
    [
      'cross-site-refused',
      async (page) => {
        await page.goto(appOrigin);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL(`${server.url}/api/auth/callback/credentials`);
        await expect(page.locator('h1').innerText()).resolves.toBe('Sign-in refused');
        await expect(page.getByRole('alert').innerText()).resolves.toContain(
          `This sign-in form was sent from ${appOrigin}, but this service is at ${server.url}.`,
        );
        await expect(page.locator('.hint').innerText()).resolves.toContain(`AUTH_URL=${appOrigin}`);
      },
    ],
  ];

  it('signing out from / lands on the sign-in page, which says so; Continue goes back to /', async () => {
    const { page, violations, close } = await openPage(browser, variants[0]!);
    try {
      await signIn(page, server.url);
      await page.waitForURL(`${server.url}/`);
      await page.goto(`${server.url}/api/auth/signin`);
      await page.getByRole('link', { name: 'Continue' }).click();
      await page.waitForURL(`${server.url}/`);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${server.url}/api/auth/signin?signedOut=1`);
      await expect(page.getByRole('status').innerText()).resolves.toBe('You have signed out.');
      // `/` now sends the visitor to the sign-in page.
      await page.goto(`${server.url}/`);
      expect(page.url()).toBe(`${server.url}/api/auth/signin`);
      expect(violations).toEqual([]);
    } finally {
      await close();
    }
  });

  describe.each(variants)('$name', (variant) => {
    it.each(states)('%s', async (name, reach) => {
      const { page, violations, close } = await openPage(browser, variant);
      try {
        await reach(page);
        await page.screenshot({
          path: path.join(artifacts, `${name}-${variant.name}.png`),
          fullPage: true,
        });
        await expectPaintedFor(page, variant);
        expect(violations).toEqual([]);
      } finally {
        await close();
      }
    });
  });
});
