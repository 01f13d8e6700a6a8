import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectPaintedFor,
  screensRun,
  launchChromium,
  openPage,
  screenVariants as variants,
} from '../helpers/chromium.js';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

// Issue 19, item 6: the account page in a real Chromium with JavaScript switched off, light,
// dark (prefers-color-scheme) and on a 390 px phone, each state screenshotted for a person to
// look at (test-artifacts/e2e-browser/account/, gitignored), with the CSP holding in each.

const password = 'correct horse battery staple';
const newPassword = 'a brand new and long passphrase';
const artifacts = path.resolve('test-artifacts', 'e2e-browser', 'account');

describe.skipIf(!screensRun)('the account page in Chromium, no script', () => {
  let server: TestServer;
  let browser: Browser;
  // Another origin, as a page of another site posting to the account's form would be.
  let foreign: http.Server;
  let foreignOrigin: string;
  let users = 0;

  /** A new user (each state changes its own account), signed in through /account. */
  async function signedInAtAccount(page: Page, name = 'Ada Lovelace'): Promise<string> {
    users += 1;
    const email = `user${users}@example.com`;
    await addUser(server, email, password, name);
    await page.goto(`${server.url}/account`);
    await page.waitForURL(/\/api\/auth\/signin\?callbackUrl=%2Faccount$/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${server.url}/account`);
    return email;
  }

  async function changePassword(page: Page, current: string, next: string, repeat = next) {
    await page.getByLabel('Current password').fill(current);
    await page.getByLabel('New password', { exact: true }).fill(next);
    await page.getByLabel('Repeat the new password').fill(repeat);
    await page.getByRole('button', { name: 'Change password' }).click();
  }

  /** The code of `key` (base32) for the step `steps` steps from now. */
  const codeOf = (key: string, steps: number) =>
    TOTP.generate({ secret: Secret.fromBase32(key), timestamp: Date.now() + steps * 30_000 });

  /** TOTP turned on from the page's own forms; the app's key. */
  async function enrolTotpOnPage(page: Page): Promise<string> {
    const setup = page.locator('form[action="/account/totp/setup"]');
    await page.getByText('Set up two-step sign-in').click();
    await setup.getByLabel('Your password').fill(password);
    await setup.getByRole('button', { name: 'Continue' }).click();
    const key = (await page.locator('.fact code').innerText()).trim();
    await page.getByLabel('Code from your authenticator app').fill(codeOf(key, 0));
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
    await expect(page.locator('ul.codes li').count()).resolves.toBe(10);
    await page.goto(`${server.url}/account`);
    return key;
  }

  beforeAll(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    [server, browser] = await Promise.all([
      startServer({ throttle: { emailMaxFailures: 2 } }),
      launchChromium(),
    ]);
    foreign = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!DOCTYPE html><title>Elsewhere</title>
<form method="post" action="${server.url}/account/profile">
<input name="csrfToken" value="x"><input name="name" value="Mallory"><button>Rename</button></form>`);
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    foreignOrigin = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => foreign?.close(resolve));
  });

  /** Each state: how to reach it, and what must be on the screen once there. */
  const states: [name: string, reach: (page: Page, variant: string) => Promise<void>][] = [
    [
      'account',
      async (page) => {
        const email = await signedInAtAccount(page);
        await expect(page.title()).resolves.toBe('Your account – Gatehouse');
        await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe(
          'Ada Lovelace',
        );
        await expect(page.locator('.fact').innerText()).resolves.toContain(email);
      },
    ],
    [
      'home-link',
      async (page) => {
        await signedInAtAccount(page);
        await page.goto(`${server.url}/`);
        await page.getByRole('link', { name: 'Your account' }).click();
        await page.waitForURL(`${server.url}/account`);
        await page.goto(`${server.url}/`);
      },
    ],
    [
      'name-changed',
      async (page) => {
        await signedInAtAccount(page);
        await page.getByLabel('Name', { exact: true }).fill('Augusta Ada King');
        await page.getByRole('button', { name: 'Save name' }).click();
        await page.waitForURL(`${server.url}/account?done=profile`);
        await expect(page.getByRole('status').innerText()).resolves.toBe('Your name was changed.');
        await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe(
          'Augusta Ada King',
        );
      },
    ],
    [
      'password-changed',
      async (page) => {
        await signedInAtAccount(page);
        await changePassword(page, password, newPassword);
        await page.waitForURL(`${server.url}/account?done=password`);
        await expect(page.getByRole('status').innerText()).resolves.toBe(
          'Password changed; your other sessions were signed out.',
        );
      },
    ],
    [
      'password-wrong-current',
      async (page, variant) => {
        await signedInAtAccount(page);
        await changePassword(page, 'not the password at all', newPassword);
        await page.waitForURL(`${server.url}/account/password/change`);
        // The refusal is inside the form, and the field it is about has the focus: the page
        // opens scrolled to it, not at its top (what a phone shows first).
        await expect(
          page.locator('form[action="/account/password/change"] [role="alert"]').count(),
        ).resolves.toBe(1);
        await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe(
          'currentPassword',
        );
        await page.screenshot({
          path: path.join(artifacts, `password-refused-view-${variant}.png`),
        });
        await expect(page.title()).resolves.toBe('Error: Your account – Gatehouse');
        await expect(page.getByRole('alert').innerText()).resolves.toMatch(
          /^Your current password is not correct/,
        );
        await expect(
          page.getByLabel('Current password').getAttribute('aria-invalid'),
        ).resolves.toBe('true');
        // No password comes back typed.
        await expect(page.getByLabel('Current password').inputValue()).resolves.toBe('');
      },
    ],
    [
      'password-weak',
      async (page) => {
        await signedInAtAccount(page);
        await changePassword(page, password, 'password12345678');
        await expect(page.getByRole('alert').innerText()).resolves.toMatch(/commonly used/);
      },
    ],
    [
      'name-refused-kept',
      async (page) => {
        await signedInAtAccount(page);
        // Blanks only: the browser's `required` lets it through, the server refuses it.
        await page.getByLabel('Name', { exact: true }).fill('   ');
        await page.getByRole('button', { name: 'Save name' }).click();
        await page.waitForURL(`${server.url}/account/profile`);
        await expect(page.getByRole('alert').innerText()).resolves.toBe(
          'Enter a name of 1 to 200 characters.',
        );
        await expect(
          page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'),
        ).resolves.toBe('true');
      },
    ],
    [
      'password-throttled',
      async (page) => {
        await signedInAtAccount(page);
        for (let i = 0; i < 3; i += 1) {
          await changePassword(page, 'a wrong password', newPassword);
          await page.waitForURL(`${server.url}/account/password/change`);
        }
        await expect(page.getByRole('alert').innerText()).resolves.toMatch(
          /^Too many wrong passwords\. .* Please try again in 15 minutes\.$/,
        );
      },
    ],
    [
      'sessions',
      async (page, variant) => {
        const email = await signedInAtAccount(page);
        // A phone signed in too, and a wrong password typed somewhere: both on the page.
        const phone = new Client(server.url, {
          'user-agent':
            'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
        });
        await phone.signIn(email, password);
        await new Client(server.url).signIn(email, 'not the password');
        // Sign-in's events are written just after its answer: wait for the three.
        for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
          const listed = (await (await phone.get('/api/account/events')).json()) as {
            events: unknown[];
          };
          if (listed.events.length === 3) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await page.reload();
        const sessions = page.locator('section[aria-labelledby="sessions-title"] li');
        await expect(sessions.count()).resolves.toBe(2);
        await expect(sessions.first().innerText()).resolves.toMatch(
          /^Safari 17 on iOS\n+this computer \(loopback\) · signed in /,
        );
        await expect(sessions.nth(1).innerText()).resolves.toContain('This one');
        await expect(
          page.locator('section[aria-labelledby="history-title"] li').allInnerTexts(),
        ).resolves.toEqual([
          expect.stringMatching(/^Wrong password entered\n+/),
          expect.stringMatching(/^Signed in\n+.* · Safari 17 on iOS · this computer \(loopback\)$/),
          expect.stringMatching(/^Signed in\n+/),
        ]);
        await page.screenshot({
          path: path.join(artifacts, `sessions-listed-${variant}.png`),
          fullPage: true,
        });
        await page.getByRole('button', { name: 'Sign out this session' }).click();
        await page.waitForURL(`${server.url}/account?done=session`);
        await expect(page.getByRole('status').innerText()).resolves.toBe(
          'That session was signed out.',
        );
        await expect(sessions.count()).resolves.toBe(1);
        await expect(phone.session()).resolves.toBeNull();
      },
    ],
    [
      'totp-move',
      async (page, variant) => {
        await signedInAtAccount(page);
        const old = await enrolTotpOnPage(page);
        const move = page.locator('form[action="/account/totp/setup"]');
        await page.getByText('Move to a new authenticator app').click();
        await expect(
          page.locator('section[aria-labelledby="factor-title"]').innerText(),
        ).resolves.toContain(
          'Moving asks for a code from your current app, or one of your recovery codes, as turning it off does',
        );
        // The password alone moves nothing: a code that is not the current app's is refused
        // beside its field.
        await move.getByLabel('Your password').fill(password);
        await move.getByLabel(/^Code from your current authenticator app/).fill('000000');
        await move.getByRole('button', { name: 'Continue' }).click();
        await page.waitForURL(`${server.url}/account/totp/setup`);
        await expect(move.getByRole('alert').innerText()).resolves.toBe(
          'That is not a code your current app shows now, nor an unused recovery code, so nothing changed.',
        );
        await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('moveCode');
        await page.screenshot({
          path: path.join(artifacts, `totp-move-refused-${variant}.png`),
          fullPage: true,
        });
        await move.getByLabel('Your password').fill(password);
        // The step after the one the set-up's code spent.
        await move.getByLabel(/^Code from your current authenticator app/).fill(codeOf(old, 1));
        await move.getByRole('button', { name: 'Continue' }).click();
        await expect(
          page.getByRole('button', { name: 'Use the new app from now on' }).count(),
        ).resolves.toBe(1);
        await page.screenshot({
          path: path.join(artifacts, `totp-move-new-key-${variant}.png`),
          fullPage: true,
        });
        const key = (await page.locator('.fact code').innerText()).trim();
        expect(key).not.toBe(old);
        await page.getByLabel('Code from your new authenticator app').fill(codeOf(key, 0));
        await page.getByRole('button', { name: 'Use the new app from now on' }).click();
        await expect(page.locator('ul.codes li').count()).resolves.toBe(10);
      },
    ],
    [
      'cross-site-refused',
      async (page) => {
        await signedInAtAccount(page);
        await page.goto(foreignOrigin);
        await page.getByRole('button', { name: 'Rename' }).click();
        await page.waitForURL(`${server.url}/account/profile`);
        await expect(page.locator('h1').innerText()).resolves.toBe('Change refused');
        await expect(page.getByRole('alert').innerText()).resolves.toContain(
          `This account form was sent from ${foreignOrigin}, but this service is at ${server.url}.`,
        );
      },
    ],
  ];

  it('a password change without script keeps this browser signed in and signs the other out', async () => {
    const here = await openPage(browser, { ...variants[0]!, javaScriptEnabled: false });
    const there = await openPage(browser, { ...variants[0]!, javaScriptEnabled: false });
    try {
      const email = await signedInAtAccount(here.page);
      await there.page.goto(`${server.url}/api/auth/signin`);
      await there.page.getByLabel('Email').fill(email);
      await there.page.getByLabel('Password').fill(password);
      await there.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await there.page.waitForURL(`${server.url}/`);
      await changePassword(here.page, password, newPassword);
      await here.page.waitForURL(`${server.url}/account?done=password`);
      await here.page.reload();
      await expect(here.page.title()).resolves.toBe('Your account – Gatehouse');
      await there.page.goto(`${server.url}/account`);
      // Its session ended: the sign-in page says so (Auth.js's SessionRequired).
      await there.page.waitForURL(
        /\/api\/auth\/signin\?callbackUrl=%2Faccount&error=SessionRequired$/,
      );
      expect(await there.page.getByRole('status').textContent()).toContain(
        'Your session has ended',
      );
      // Signing out from the account page works as everywhere.
      await here.page.getByRole('button', { name: 'Sign out' }).click();
      await here.page.waitForURL(`${server.url}/api/auth/signin?signedOut=1`);
      expect([...here.violations, ...there.violations]).toEqual([]);
    } finally {
      await here.close();
      await there.close();
    }
  });

  // Every state in the first variant (light); in dark and on a phone the states whose look
  // differs most (the page, the sessions list, a refusal beside its field, another page), so
  // the screenshots cover each look without walking every flow three times (npm test's time).
  const lookStates = new Set([
    'account',
    'sessions',
    'password-weak',
    'totp-move',
    'cross-site-refused',
  ]);
  describe.each(variants)('$name', (variant) => {
    const these =
      variant === variants[0] ? states : states.filter(([name]) => lookStates.has(name));
    it.each(these)('%s', async (name, reach) => {
      const { page, violations, close } = await openPage(browser, {
        ...variant,
        javaScriptEnabled: false,
      });
      try {
        await reach(page, variant.name);
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
