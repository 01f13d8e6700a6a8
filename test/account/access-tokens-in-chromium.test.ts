import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  chromiumSuite,
  expectPaintedFor,
  screensRun,
  screenVariants as variants,
} from '../helpers/chromium.js';
import { addUser, startServer } from '../helpers/server.js';

// Issue 39, item 4: the account page's access tokens in a real Chromium with JavaScript off,
// light, dark and on a 390 px phone: the section with two tokens and its create form, and the
// answer that shows a new token once, screenshotted beside the account page's others
// (test-artifacts/e2e-browser/account/, gitignored), with the CSP holding in each.

const password = 'correct horse battery staple';

describe.skipIf(!screensRun)('access tokens on the account page in Chromium, no script', () => {
  const suite = chromiumSuite('account', () => startServer());
  let users = 0;

  /** A new user, signed in through /account (so the session is recent: no password asked). */
  async function signedInAtAccount(page: Page): Promise<void> {
    users += 1;
    const email = `tokens${users}@example.com`;
    const server = suite.started;
    await addUser(server, email, password, 'Ada Lovelace');
    await page.goto(`${server.url}/account`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${server.url}/account`);
  }

  /** Makes a token from the page's form; its secret as the answer shows it. */
  async function createOnPage(page: Page, name: string, expiry: string): Promise<string> {
    await page.getByText('Create an access token').click();
    await page.getByLabel('Name (what it is for)').fill(name);
    await page.getByLabel('Expires after').selectOption({ label: expiry });
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.waitForURL(`${suite.started.url}/account/tokens`);
    return page.locator('#newAccessToken').inputValue();
  }

  describe.each(variants)('$name', (variant) => {
    it('two tokens listed, the create form open; a refusal told inside it', async () => {
      const { page, violations, close } = await suite.open(variant, { javaScriptEnabled: false });
      try {
        await signedInAtAccount(page);
        await createOnPage(page, 'Nightly export', '30 days');
        await page.goto(`${suite.started.url}/account`);
        const token = await createOnPage(page, 'Deploy from CI', 'No expiry');
        const used = await fetch(`${suite.started.url}/api/auth/token`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(used.status).toBe(200);
        await page.goto(`${suite.started.url}/account`);
        const section = page.locator('section[aria-labelledby="tokens-title"]');
        await expect(section.locator('li').allInnerTexts()).resolves.toEqual([
          expect.stringMatching(/^Deploy from CI\n+Created .* · never expires · last used /),
          expect.stringMatching(/^Nightly export\n+Created .* · expires .* · never used/),
        ]);
        await page.getByText('Create an access token').click();
        await section.screenshot({ path: shotPath(`access-tokens-listed-${variant.name}.png`) });
        await expectPaintedFor(page, variant);
        // Blanks only: the browser's `required` lets it through, the server refuses it, and the
        // form comes back open with the refusal inside it, the name's field focused.
        await page.getByLabel('Name (what it is for)').fill('   ');
        await page.getByRole('button', { name: 'Create token' }).click();
        await page.waitForURL(`${suite.started.url}/account/tokens`);
        await expect(section.getByRole('alert').innerText()).resolves.toBe(
          'Enter a name of 1 to 200 characters.',
        );
        await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe(
          'accessTokenName',
        );
        await section.screenshot({ path: shotPath(`access-token-refused-${variant.name}.png`) });
        expect(violations).toEqual([]);
      } finally {
        await close();
      }
    });

    it('a new token shown once, the page opened at it', async () => {
      const { page, violations, close } = await suite.open(variant, { javaScriptEnabled: false });
      try {
        await signedInAtAccount(page);
        const token = await createOnPage(page, 'Nightly export', '90 days');
        expect(token).toMatch(/^gat_[0-9A-Za-z]{36}$/);
        // The field has the focus, so the page opens scrolled to it, not at its top.
        await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe(
          'newAccessToken',
        );
        await expect(page.locator('.once').isVisible()).resolves.toBe(true);
        await expect(page.locator('.once').innerText()).resolves.toContain(
          'Copy it now: it is not shown again.',
        );
        await page.screenshot({ path: shotPath(`access-token-shown-${variant.name}.png`) });
        // A reload of the page (not of the post) shows it no more.
        await page.goto(`${suite.started.url}/account`);
        await expect(page.locator('#newAccessToken').count()).resolves.toBe(0);
        await expectPaintedFor(page, variant);
        expect(violations).toEqual([]);
      } finally {
        await close();
      }
    });
  });
});

const shotPath = (name: string) => path.resolve('test-artifacts', 'e2e-browser', 'account', name);
