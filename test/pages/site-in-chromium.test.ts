import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

// Issue 18, item 5: every state of Gatehouse's own pages in a real Chromium, light, dark
// (prefers-color-scheme) and on a 390 px phone, screenshotted for a person to look at
// (test-artifacts/e2e-browser/site/, gitignored), with the CSP holding in each.

const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
const artifacts = path.resolve('test-artifacts', 'e2e-browser', 'site');

const variants = [
  { name: 'light', viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const },
  { name: 'dark', viewport: { width: 1280, height: 800 }, colorScheme: 'dark' as const },
  { name: 'phone', viewport: { width: 390, height: 844 }, colorScheme: 'light' as const },
];
type Variant = (typeof variants)[number];

/** A fresh browser profile (own cookie jar) in a variant, recording CSP violations. */
async function openPage(browser: Browser, variant: Variant) {
  const context = await browser.newContext({
    viewport: variant.viewport,
    colorScheme: variant.colorScheme,
  });
  const page = await context.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) violations.push(message.text());
  });
  return { page, violations, close: () => context.close() };
}

async function signIn(page: Page, origin: string, email = 'ada@example.com', secret = password) {
  await page.goto(`${origin}/api/auth/signin`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const style = (page: Page, selector: string, property: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((el, name) => getComputedStyle(el).getPropertyValue(name), property);

describe.skipIf(!fs.existsSync(chromiumPath))(
  'the pages in every state, light, dark and phone',
  () => {
    let server: TestServer;
    let browser: Browser;
    // Another origin (another port), as an app beside Gatehouse without AUTH_URL would be.
    let app: http.Server;
    let appOrigin: string;
    beforeAll(async () => {
      fs.mkdirSync(artifacts, { recursive: true });
      [server, browser] = await Promise.all([
        startServer(),
        chromium.launch({
          executablePath: chromiumPath,
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
        }),
      ]);
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
          await expect(page.getByRole('link', { name: 'Continue' }).isVisible()).resolves.toBe(
            true,
          );
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
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.waitForURL(`${server.url}/api/auth/callback/credentials`);
          await expect(page.locator('h1').innerText()).resolves.toBe('Sign-in refused');
          await expect(page.getByRole('alert').innerText()).resolves.toContain(
            `This sign-in form was sent from ${appOrigin}, but this service is at ${server.url}.`,
          );
          await expect(page.locator('.hint').innerText()).resolves.toContain(
            `AUTH_URL=${appOrigin}`,
          );
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
          // Nothing sticks out sideways.
          await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBe(
            variant.viewport.width,
          );
          // The scheme the browser prefers is the one painted.
          const [card, text] =
            variant.colorScheme === 'dark'
              ? ['rgb(22, 27, 34)', 'rgb(230, 237, 243)']
              : ['rgb(255, 255, 255)', 'rgb(31, 35, 40)'];
          await expect(style(page, 'main', 'background-color')).resolves.toBe(card);
          await expect(style(page, 'body', 'color')).resolves.toBe(text);
          expect(violations).toEqual([]);
        } finally {
          await close();
        }
      });
    });
  },
);
