import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, startServer, type TestServer } from './helpers/server.js';

const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';

/** A fresh browser profile (own cookie jar) that records CSP violations, however they surface. */
async function openPage(browser: Browser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) violations.push(message.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(
        `Content Security Policy: ${event.violatedDirective} blocked ${event.blockedURI}`,
      );
    });
  });
  return { page, violations, close: () => context.close() };
}

/**
 * The session as this browser sees it: a top-level visit in a new tab, with the browser's own
 * cookies. Script on the service's pages cannot fetch it: their CSP leaves connect-src at 'none'.
 */
async function sessionOf(page: Page): Promise<unknown> {
  const tab = await page.context().newPage();
  const response = await tab.goto(new URL('/api/auth/session', page.url()).href);
  const body: unknown = await response?.json();
  await tab.close();
  return body;
}

async function signIn(page: Page, origin: string, email: string, secret: string, to = origin) {
  await page.goto(`${origin}/api/auth/signin?callbackUrl=${encodeURIComponent(to)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(secret);
  await page.getByRole('button', { name: /sign in/i }).click();
}

describe.skipIf(!fs.existsSync(chromiumPath))('a person using a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let userId: string;
  beforeAll(async () => {
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
    userId = await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in on the built-in page and lands on the callback URL, with no CSP violation', async () => {
    const { page, violations, close } = await openPage(browser);
    const callbackUrl = `${server.url}/api/health`;
    await page.goto(`${server.url}/api/auth/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`);
    await expect(page.getByLabel('Email').isVisible()).resolves.toBe(true);
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
    await signIn(page, server.url, 'ada@example.com', password, callbackUrl);
    await page.waitForURL(callbackUrl);
    const session = (await sessionOf(page)) as { user: unknown; expires: string };
    expect(Object.keys(session).sort()).toEqual(['expires', 'user']);
    expect(session.user).toEqual({ id: userId, email: 'ada@example.com', name: 'Ada Lovelace' });
    expect(Date.parse(session.expires)).toBeGreaterThan(Date.now() + 29 * 86400_000);
    expect(violations).toEqual([]);
    await close();
  });

  it('a wrong password shows the sign-in error on the page and leaves no session', async () => {
    const { page, violations, close } = await openPage(browser);
    await signIn(page, server.url, 'ada@example.com', 'not the password at all');
    await page.waitForURL(`${server.url}/api/auth/signin?error=CredentialsSignin&code=credentials`);
    const error = page.locator('.error');
    await expect(error.isVisible()).resolves.toBe(true);
    await expect(error.innerText()).resolves.toMatch(/sign in failed/i);
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
    await expect(sessionOf(page)).resolves.toBeNull();
    expect(violations).toEqual([]);
    await close();
  });

  it('signs out by pressing the button on the built-in sign-out page', async () => {
    const { page, violations, close } = await openPage(browser);
    await signIn(page, server.url, 'ada@example.com', password);
    await page.waitForURL(`${server.url}/`);
    await expect(sessionOf(page)).resolves.toMatchObject({ user: { id: userId } });
    await page.goto(`${server.url}/api/auth/signout`);
    await page.getByRole('button', { name: /sign out/i }).click();
    await page.waitForURL(`${server.url}/`);
    await expect(sessionOf(page)).resolves.toBeNull();
    const cookies = await page.context().cookies(server.url);
    expect(cookies.map((c) => c.name)).not.toContain('authjs.session-token');
    expect(violations).toEqual([]);
    await close();
  });

  it('the sign-in page renders styled, and script on it cannot reach the API', async () => {
    const { page, violations, close } = await openPage(browser);
    await page.setViewportSize({ width: 800, height: 600 });
    await page.goto(`${server.url}/api/auth/signin`);
    await page.screenshot({ path: '/tmp/gatehouse-signin.png' });
    // Auth.js's light theme: grey page, white card, its blue button (not browser defaults).
    const colour = (selector: string) =>
      page.locator(selector).evaluate((el) => getComputedStyle(el).backgroundColor);
    await expect(colour('body')).resolves.toBe('rgb(236, 236, 236)');
    await expect(colour('.card')).resolves.toBe('rgb(255, 255, 255)');
    await expect(colour('#submitButton')).resolves.toBe('rgb(21, 126, 251)');
    const box = await page.locator('.card').boundingBox();
    expect(box?.width).toBeGreaterThan(200);
    expect(violations).toEqual([]);
    // The strict CSP (default-src 'none', no connect-src) holds in a real browser.
    const fetched = await page.evaluate(() => fetch('/api/auth/session').then(() => 'ok', String));
    expect(fetched).toMatch(/Failed to fetch/);
    await expect.poll(() => violations.join('\n')).toMatch(/connect-src/);
    await close();
  });
});
