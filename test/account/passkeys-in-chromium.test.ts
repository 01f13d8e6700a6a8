import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectPaintedFor,
  hasChromium,
  launchChromium,
  openVariantPage,
  screenVariants,
  screensRun,
} from '../helpers/chromium.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

// Passkeys in a real Chromium with the DevTools virtual authenticator (CDP `WebAuthn.*`): one is
// added from /account, then signs in through Gatehouse's own page and through the unchanged
// `next-auth/webauthn` client; a removed one is refused. Screenshots of the passkeys section and
// the sign-in button, light, dark and 390 px, go to test-artifacts/e2e-browser/passkeys/.

const password = 'correct horse battery staple';
const artifacts = path.resolve('test-artifacts', 'e2e-browser', 'passkeys');
const nextModules = path.resolve('examples/nextjs/node_modules');
const testModules = path.resolve('test/node_modules');
const haveClient =
  fs.existsSync(path.join(nextModules, 'next-auth/webauthn.js')) &&
  fs.existsSync(path.join(testModules, '@simplewebauthn/browser'));

/** A platform authenticator that holds discoverable credentials and verifies its user. */
async function virtualAuthenticator(page: Page, userVerified = true) {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: userVerified,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

describe.skipIf(!hasChromium)('passkeys in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  /** The service as the browser reaches it: WebAuthn refuses an IP address as relying party. */
  let origin: string;
  let clientScript = '';
  let users = 0;

  beforeAll(async () => {
    fs.mkdirSync(artifacts, { recursive: true });
    [server, browser] = await Promise.all([startServer(), launchChromium()]);
    origin = server.url.replace('127.0.0.1', 'localhost');
    if (haveClient) {
      // The stock client, bundled as an app would ship it (next-auth from the example's install).
      const bundled = await build({
        stdin: {
          contents: `import { signIn } from 'next-auth/webauthn';
window.passkeySignIn = (options) => signIn('passkey', options);`,
          resolveDir: path.resolve('test'),
        },
        bundle: true,
        format: 'iife',
        write: false,
        logLevel: 'silent',
        nodePaths: [nextModules, testModules],
        define: {
          'process.env.NODE_ENV': '"production"',
          'process.env.NEXTAUTH_URL': 'undefined',
          'process.env.NEXTAUTH_URL_INTERNAL': 'undefined',
          'process.env.VERCEL_URL': 'undefined',
        },
      });
      clientScript = bundled.outputFiles[0]?.text ?? '';
    }
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A new user signed in with the password at /account (so the session is recent). */
  async function signedInAtAccount(page: Page): Promise<string> {
    users += 1;
    const email = `passkey${users}@example.com`;
    await addUser(server, email, password, 'Ada Lovelace');
    await page.goto(`${origin}/account`);
    await page.waitForURL(/\/api\/auth\/signin\?callbackUrl=%2Faccount$/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${origin}/account`);
    return email;
  }

  async function addPasskey(page: Page, name: string) {
    await page.getByLabel('Name for the new passkey').fill(name);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(`${origin}/account?done=passkey-added`);
  }

  async function signOut(page: Page) {
    await page.goto(`${origin}/account`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/api\/auth\/signin/);
  }

  const proofsOf = async (email: string) =>
    (
      await server.db
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select(['sessions.proofs'])
        .where('users.email', '=', email)
        .where('sessions.revoked_at', 'is', null)
        .execute()
    ).map((row) => row.proofs);

  it('adds a passkey from /account, signs in with it on the sign-in page and through next-auth/webauthn, and refuses it once removed', async () => {
    const { page, violations, close } = await openVariantPage(
      browser,
      screenVariants[0],
      artifacts,
    );
    try {
      const { cdp, authenticatorId } = await virtualAuthenticator(page);
      const email = await signedInAtAccount(page);
      await addPasskey(page, 'Test laptop');
      expect(await page.locator('.notice-info').textContent()).toContain('Passkey added');
      expect(await page.locator('.passkeys').textContent()).toContain('Test laptop');

      await signOut(page);
      await page.goto(`${origin}/api/auth/signin?callbackUrl=%2Faccount`);
      const posted = page.waitForRequest(`${origin}/api/auth/callback/passkey`);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.waitForURL(`${origin}/account`);
      // User verification: the session proves both factors.
      expect(await proofsOf(email)).toEqual(['passkey user_verification']);
      const account = await page.evaluate(() =>
        fetch('/api/account').then((response) => response.json()),
      );
      expect(account).toMatchObject({ secondFactors: { passkeys: 1 } });
      // The same assertion, challenge cookie and CSRF pair sent again: the challenge was spent.
      const assertion = await posted;
      const replayed = await fetch(assertion.url(), {
        method: 'POST',
        headers: await assertion.allHeaders(),
        body: assertion.postData() ?? '',
      });
      expect(await replayed.json()).toEqual({
        url: `${origin}/api/auth/error?error=WebAuthnVerificationError`,
      });
      expect(await proofsOf(email)).toHaveLength(1);
      expect(await page.locator('.passkeys').textContent()).toContain('last used');

      if (haveClient) {
        await signOut(page);
        // The unchanged client on the service's origin (as an app proxying /api/auth would be).
        await page.route(`${origin}/app`, (route) =>
          route.fulfill({
            contentType: 'text/html',
            body: `<!DOCTYPE html><title>App</title><script>${clientScript}</script>`,
          }),
        );
        await page.goto(`${origin}/app`);
        const result = await page.evaluate(() =>
          (window as unknown as { passkeySignIn(options: object): Promise<unknown> }).passkeySignIn(
            { redirect: false },
          ),
        );
        expect(result).toMatchObject({ ok: true, error: null, status: 200 });
        const session = await page.evaluate(() =>
          fetch('/api/auth/session').then((response) => response.json()),
        );
        expect(session).toMatchObject({ user: { email } });
      }

      // Removed (from a recent session: no password asked), the credential no longer signs in.
      await page.goto(`${origin}/account`);
      await page.getByText('Rename or remove').click();
      await page.getByRole('button', { name: 'Remove this passkey' }).click();
      await page.waitForURL(`${origin}/account?done=passkey-remove`);
      await signOut(page);
      await page.goto(`${origin}/api/auth/signin?callbackUrl=%2Faccount`);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.waitForURL(/error=WebAuthnVerificationError/);
      expect(await page.locator('#notice').textContent()).toContain(
        'That passkey was not accepted',
      );
      expect(await proofsOf(email)).toEqual([]);

      if (haveClient) {
        // A new passkey through the stock client's `action: 'register'`, from a recent session
        // (the device forgot the removed one, as a person would delete it there too).
        await cdp.send('WebAuthn.clearCredentials', { authenticatorId });
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(password);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL(`${origin}/account`);
        await page.goto(`${origin}/app`);
        const registered = await page.evaluate(() =>
          (window as unknown as { passkeySignIn(options: object): Promise<unknown> }).passkeySignIn(
            { action: 'register', redirect: false },
          ),
        );
        expect(registered).toMatchObject({ ok: true, error: null });
        const listed = await page.evaluate(() =>
          fetch('/api/account/passkeys').then((response) => response.json()),
        );
        expect(listed).toMatchObject({
          passkeys: [{ name: expect.stringMatching(/^Passkey added/) }],
        });
      }
      expect(violations).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  // The screenshots once, with fast paths on (test/helpers/chromium.ts says why).
  describe.skipIf(!screensRun)('screens', () => {
    it.each(screenVariants)(
      'shows the passkeys section and the sign-in button ($name)',
      async (variant) => {
        const { page, violations, close, shot } = await openVariantPage(
          browser,
          variant,
          artifacts,
        );
        try {
          await virtualAuthenticator(page);
          await signedInAtAccount(page);
          await addPasskey(page, 'Work laptop');
          await page.locator('#passkeys-title').scrollIntoViewIfNeeded();
          await shot('account-passkeys');
          await page.getByText('Rename or remove').click();
          await shot('account-passkey-open');
          await expectPaintedFor(page, variant);
          await signOut(page);
          expect(
            await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible(),
          ).toBe(true);
          await shot('signin-with-passkey');
          await expectPaintedFor(page, variant);
          expect(violations).toEqual([]);
        } finally {
          await close();
        }
      },
      30_000,
    );
  });
});
