import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, openPage } from '../helpers/chromium.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';
// Screenshots of every state of the pages, for a person to look at (gitignored).
const artifacts = path.resolve('test-artifacts', 'e2e-browser');
const desktop = { width: 1280, height: 800 };
const phone = { width: 360, height: 740 };

function screenshot(page: Page, name: string) {
  return page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
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

async function fillSignIn(page: Page, origin: string, email: string, secret: string, to = origin) {
  await page.goto(`${origin}/api/auth/signin?callbackUrl=${encodeURIComponent(to)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(secret);
}

async function signIn(page: Page, origin: string, email: string, secret: string, to = origin) {
  await fillSignIn(page, origin, email, secret, to);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

const alertText = (page: Page) => page.getByRole('alert').innerText();

describe.skipIf(!hasChromium)('a person using a real browser', () => {
  let server: TestServer;
  let browser: Browser;
  let userId: string;
  beforeAll(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    [server, browser] = await Promise.all([
      // Two failures lock an email, so the throttled state is quick to reach.
      startServer({ throttle: { emailMaxFailures: 2 } }),
      launchChromium(),
    ]);
    userId = await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in on the page and lands on the callback URL, with no CSP violation', async () => {
    const { page, violations, close } = await openPage(browser, { viewport: desktop });
    const callbackUrl = `${server.url}/api/health`;
    await page.goto(`${server.url}/api/auth/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`);
    await screenshot(page, '01-signin');
    // Focus starts in the email field, then follows the form: password, then the button.
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('email');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('password');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.tagName)).resolves.toBe('BUTTON');
    await screenshot(page, '02-signin-button-focused');
    await signIn(page, server.url, 'ada@example.com', password, callbackUrl);
    await page.waitForURL(callbackUrl);
    const session = (await sessionOf(page)) as { user: unknown; expires: string };
    expect(Object.keys(session).sort()).toEqual(['expires', 'user']);
    expect(session.user).toEqual({ id: userId, email: 'ada@example.com', name: 'Ada Lovelace' });
    expect(Date.parse(session.expires)).toBeGreaterThan(Date.now() + 29 * 86400_000);
    expect(violations).toEqual([]);
    await close();
  });

  it('a wrong password is announced as an alert that describes both fields, on a phone too', async () => {
    const { page, violations, close } = await openPage(browser, { viewport: desktop });
    await signIn(page, server.url, 'ada@example.com', 'not the password at all');
    await page.waitForURL(`${server.url}/api/auth/signin?error=CredentialsSignin&code=credentials`);
    await expect(alertText(page)).resolves.toBe(
      'Wrong email or password. Check both and try again.',
    );
    await expect(page.getByLabel('Email').getAttribute('aria-describedby')).resolves.toBe('notice');
    await expect(page.getByLabel('Password').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(sessionOf(page)).resolves.toBeNull();
    await screenshot(page, '03-signin-wrong-password');
    await page.setViewportSize(phone);
    // Nothing sticks out sideways on a narrow phone.
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBe(
      phone.width,
    );
    await screenshot(page, '04-signin-wrong-password-phone');
    expect(violations).toEqual([]);
    await close();
  });

  it('a locked account says the password was not checked and when to try again', async () => {
    const { page, violations, close } = await openPage(browser, { viewport: desktop });
    for (let i = 0; i < 2; i += 1) {
      await signIn(page, server.url, 'grace@example.com', 'a wrong password, twice');
      await page.waitForURL(/code=credentials$/);
    }
    await signIn(page, server.url, 'grace@example.com', 'perhaps the right password');
    await page.waitForURL(/code=rate_limited&retryAfter=\d+$/);
    await expect(alertText(page)).resolves.toMatch(
      /^Too many sign-in attempts\..*your password was not checked this time\. Please try again in 15 minutes\.$/,
    );
    await screenshot(page, '05-signin-throttled');
    await page.setViewportSize(phone);
    await screenshot(page, '06-signin-throttled-phone');
    expect(violations).toEqual([]);
    await close();
  });

  it('a form whose CSRF cookie is gone says the form expired', async () => {
    const { page, violations, close } = await openPage(browser, { viewport: desktop });
    await fillSignIn(page, server.url, 'ada@example.com', password);
    await page.context().clearCookies();
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${server.url}/api/auth/signin?error=MissingCSRF`);
    await expect(alertText(page)).resolves.toMatch(/^This form expired before it was sent/);
    await expect(sessionOf(page)).resolves.toBeNull();
    await screenshot(page, '07-signin-form-expired');
    expect(violations).toEqual([]);
    await close();
  });

  it('a sign-in the service cannot take shows the busy page with its 503', async () => {
    const { page, violations, close } = await openPage(browser, { viewport: desktop });
    await fillSignIn(page, server.url, 'ada@example.com', password);
    const other = new DatabaseSync(path.join(server.dir, 'test.db'));
    other.exec('begin exclusive');
    try {
      const answer = page.waitForResponse((r) =>
        r.url().endsWith('/api/auth/callback/credentials'),
      );
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      const response = await answer;
      expect(response.status()).toBe(503);
      expect(response.headers()['retry-after']).toBe('5');
      await page.waitForURL(`${server.url}/api/auth/callback/credentials`);
      await expect(alertText(page)).resolves.toMatch(/^The service is busy right now/);
      await screenshot(page, '08-signin-busy');
    } finally {
      other.exec('rollback');
      other.close();
    }
    // The same form, sent again once the service can take it, signs in.
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${server.url}/`);
    await expect(sessionOf(page)).resolves.toMatchObject({ user: { id: userId } });
    expect(violations).toEqual([]);
    await close();
  });

  it('signs out by pressing the button on the sign-out page, which then says so', async () => {
    const { page, violations, close } = await openPage(browser, { viewport: desktop });
    await signIn(page, server.url, 'ada@example.com', password);
    await page.waitForURL(`${server.url}/`);
    await expect(sessionOf(page)).resolves.toMatchObject({ user: { id: userId } });
    await page.goto(`${server.url}/api/auth/signout`);
    await screenshot(page, '09-signout');
    await page.getByRole('button', { name: /sign out/i }).click();
    await page.waitForURL(`${server.url}/api/auth/signin?signedOut=1`);
    await expect(page.getByRole('status').innerText()).resolves.toBe('You have signed out.');
    await screenshot(page, '10-signin-signed-out');
    await expect(sessionOf(page)).resolves.toBeNull();
    const cookies = await page.context().cookies(server.url);
    expect(cookies.map((c) => c.name)).not.toContain('authjs.session-token');
    expect(violations).toEqual([]);
    await close();
  });

  it('an application sending back an ended session gets a plain explanation', async () => {
    const { page, violations, close } = await openPage(browser, { viewport: phone });
    await page.goto(`${server.url}/api/auth/signin?error=SessionRequired`);
    await expect(page.getByRole('status').innerText()).resolves.toBe(
      'Your session has ended: you signed out elsewhere, your password or address changed, or it expired. Please sign in again to continue.',
    );
    await screenshot(page, '11-signin-session-ended-phone');
    expect(violations).toEqual([]);
    await close();
  });

  it('the sign-in page renders styled, focus is visible, and script on it cannot reach another origin', async () => {
    const { page, violations, close } = await openPage(browser, {
      viewport: { width: 800, height: 600 },
    });
    await page.goto(`${server.url}/api/auth/signin`);
    // The page's own stylesheet applied (so its hash matched): not browser defaults.
    const style = (selector: string, property: string) =>
      page
        .locator(selector)
        .evaluate((el, name) => getComputedStyle(el).getPropertyValue(name), property);
    await expect(style('body', 'background-color')).resolves.toBe('rgb(246, 248, 250)');
    await expect(style('main', 'background-color')).resolves.toBe('rgb(255, 255, 255)');
    await expect(style('button[type=submit]', 'background-color')).resolves.toBe(
      'rgb(37, 99, 235)',
    );
    await expect(style('button[type=submit]', 'color')).resolves.toBe('rgb(255, 255, 255)');
    await page.keyboard.press('Tab');
    await expect(style('#password', 'outline-style')).resolves.toBe('solid');
    await expect(style('#password', 'outline-width')).resolves.toBe('3px');
    const box = await page.locator('main').boundingBox();
    expect(box?.width).toBeGreaterThan(200);
    expect(violations).toEqual([]);
    // The strict CSP (default-src 'none'; connect-src 'self' for the passkey script's requests)
    // holds in a real browser: nothing leaves for another origin.
    const fetched = await page.evaluate(() =>
      fetch('http://127.0.0.1:9/steal').then(() => 'ok', String),
    );
    expect(fetched).toMatch(/Failed to fetch/);
    // Reported by the browser after the refusal: more than the 1 s default on a loaded machine.
    await expect.poll(() => violations.join('\n'), { timeout: 20_000 }).toMatch(/connect-src/);
    await close();
  });
});
