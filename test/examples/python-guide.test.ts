import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  askResetOnGatehousePage,
  changePasswordIn,
  confirmNewAddressFromMail,
  confirmSignUp,
  grace,
  inbox,
  pagesPath,
  resetFromLink,
  said,
  signUpOnGatehousePage,
} from '../helpers/account-journey.js';
import { nginxPath } from '../helpers/nginx.js';
import { startIdentityProvider, type IdentityProvider } from '../helpers/oidc-idp.js';
import { LoopbackSmtp } from '../helpers/smtp.js';
import { examplePaths, followGuide, guideShape, type GuideRun } from './follow-guide.js';
import * as tokens from './token-checks.js';
import * as ways from './ways-in.js';

// docs/integrate-python.md, followed as written (test/examples/follow-guide.ts says how): a
// Python app (the standard library, and PyJWT for its token API) and Gatehouse behind one nginx,
// driven in Chromium: Ada signs in and out, and the app's /api/me takes her session's token
// (test/examples/token-checks.ts); Grace uses the linked Gatehouse pages and the app's own
// /account, her mail read from a loopback catcher; then issue 41's: two-step sign-in on
// Gatehouse's page (the code step, the enrolment step under SECOND_FACTOR=required), the other
// ways in, the visitor's device and network as Gatehouse records them, and the app's page while
// Gatehouse is down (test/examples/ways-in.ts).

const guidePath = 'docs/integrate-python.md';
const exampleDir = 'examples/python';
const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
/**
 * The `python3` the guide's commands get: the first on PATH when it has PyJWT and cryptography
 * (as the guide asks), else Debian's, which has them from python3-jwt and python3-cryptography
 * when a pyenv or other `python3` without them comes first on PATH.
 */
const python = ['python3', '/usr/bin/python3'].find(
  (candidate) => spawnSync(candidate, ['-c', 'import jwt, cryptography']).status === 0,
);
const missing = [
  ...[chromiumPath, nginxPath].filter((file) => !fs.existsSync(file)),
  ...(python ? [] : ['python3 with PyJWT (python3-jwt, python3-cryptography)']),
];

/** A folder whose only file is a `python3` link to `python`, put first on the app's PATH. */
function pythonFirst(): string | undefined {
  if (python === undefined || python === 'python3') return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-guide-python-'));
  fs.symlinkSync(python, path.join(dir, 'python3'));
  return dir;
}

describe(`${guidePath} shows ${exampleDir}`, () => {
  const { runs, shown, stale } = guideShape(guidePath);

  it('every file block is its file, byte for byte (node scripts/build/sync-guide.ts rewrites them)', () => {
    expect(stale).toEqual([]);
  });

  it('shows every file of the example whole, but its README', () => {
    expect(shown).toEqual(examplePaths(exampleDir, ['README.md']));
  });

  it('marks the commands this test follows: Gatehouse, a user, the app, nginx', () => {
    expect(runs).toEqual([
      'gatehouse server',
      'gatehouse command',
      'my-app server',
      'my-app server',
    ]);
  });
});

describe.skipIf(missing.length > 0)(
  missing.length === 0
    ? `following ${guidePath} to a Python app that knows who is signed in`
    : `following ${guidePath} (skipped: ${missing.join(' and ')} not installed)`,
  () => {
    let guide: GuideRun;
    let browser: Browser;
    let page: Page;
    let site = '';
    let copiedCookie = '';
    let smtp: LoopbackSmtp;
    let keys: tokens.TokenKeys;
    let adaToken = '';
    const pathFirst = pythonFirst();
    let idp: IdentityProvider;
    const chromiumLook = ways.browserThroughNetwork(chromiumPath);

    beforeAll(async () => {
      smtp = await LoopbackSmtp.start();
      keys = tokens.tokenKeys();
      idp = await startIdentityProvider();
      guide = await followGuide({
        name: 'python',
        guidePath,
        exampleDir,
        ports: [3000, 8000, 8080],
        serverPorts: [8000, 8080],
        gatehouseEnv: {
          SMTP_URL: smtp.url,
          MAIL_FROM: 'My app <no-reply@example.com>',
          ...keys.gatehouseEnv,
          ...ways.waysInEnv(idp.issuer),
        },
        ...(pathFirst && { appPathFirst: pathFirst }),
      });
      site = guide.origin(8080);
      idp.setClients([
        {
          clientId: 'my-app',
          clientSecret: ways.oidcSecret,
          redirectUris: [`${site}/api/auth/callback/oidc`],
        },
      ]);
      await guide.run();
      browser = await chromium.launch(chromiumLook.launch);
      page = await browser.newPage();
      console.log(`python guide steps, ms: ${JSON.stringify(guide.timings)}`);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await guide?.stop();
      await smtp?.close();
      await idp?.close();
      keys?.dispose();
      if (pathFirst) fs.rmSync(pathFirst, { recursive: true, force: true });
    });

    it("sends a signed-out visitor from the dashboard to Gatehouse's sign-in page, on the app's origin", async () => {
      await page.goto(`${site}/dashboard`);
      const url = new URL(page.url());
      expect(url.origin).toBe(site);
      expect(url.pathname).toBe('/api/auth/signin');
      expect(url.searchParams.get('callbackUrl')).toBe('/dashboard');
    });

    it('refuses a wrong password there, saying so', async () => {
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByText('Wrong email or password').first().waitFor();
      // The guide's PAGE_PRODUCT_NAME and APP_URL: the app's name, and the way back to it.
      await page.getByRole('heading', { name: `Sign in to ${ways.productName}` }).waitFor();
      expect(
        await page.getByRole('link', { name: `Back to ${ways.productName}` }).getAttribute('href'),
      ).toBe('/');
    });

    it('signs Ada in and brings her back to the dashboard; the home page shows her id', async () => {
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('#dashboard').waitFor();
      expect(new URL(page.url()).pathname).toBe('/dashboard');
      expect(await page.locator('#dashboard').innerText()).toContain(
        'Ada Lovelace, this page is yours',
      );
      await page.getByRole('link', { name: 'Home' }).click();
      expect(await page.locator('#server-gatehouse').innerText()).toMatch(
        /^Signed in as Ada Lovelace \(id [0-9a-f-]{8,}\)$/,
      );
      const cookie = (await page.context().cookies()).find(
        (c) => c.name === 'authjs.session-token',
      );
      expect(cookie?.httpOnly).toBe(true);
      copiedCookie = `${cookie?.name}=${cookie?.value}`;
    });

    it("/api/me takes the token Ada's page gets from /api/auth/token, checked with PyJWT, and answers who she is", async () => {
      const id = /\(id (\S+)\)$/.exec(await page.locator('#server-gatehouse').innerText())?.[1];
      const { token, status, body } = await tokens.callFromPage(page, '/api/me');
      expect([status, body]).toMatchObject([
        200,
        { id, email: 'ada@example.com', name: 'Ada Lovelace', amr: ['pwd'] },
      ]);
      expect(body.expires).toBe(new Date(decodeJwt(token).exp! * 1000).toISOString());
      adaToken = token;
    });

    it("/api/me takes the token a personal access token of Ada's gets, for a script", async () => {
      const { status, body } = await tokens.callWithAccessToken(page, site, `${site}/api/me`);
      expect([status, body]).toMatchObject([200, { id: decodeJwt(adaToken).sub, amr: ['pat'] }]);
    });

    it('/api/me refuses no token, a changed or forged one, one for another issuer or audience, and an expired one, saying why', async () => {
      await tokens.expectRefusals(`${site}/api/me`, adaToken, keys);
    });

    it("signs out on Gatehouse's page, back home signed out; a cookie copied before reads as no session", async () => {
      await page.getByRole('link', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.locator('#server-gatehouse', { hasText: 'Not signed in' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/');

      const home = await (await fetch(site, { headers: { cookie: copiedCookie } })).text();
      expect(home).toContain('<span id="server-gatehouse">Not signed in</span>');
      const dashboard = await fetch(`${site}/dashboard`, {
        headers: { cookie: copiedCookie },
        redirect: 'manual',
      });
      expect(dashboard.status).toBe(303);
    });

    it("after sign-out Ada's token is inactive on introspection at once; /api/me takes it until it expires, not after", async () => {
      const ended = {
        gatehouse: `http://127.0.0.1:${guide.port(3000)}`,
        appOrigin: site,
        cookie: copiedCookie,
      };
      await tokens.expectRevocationBound(`${site}/api/me`, adaToken, ended, keys);
    });

    let own: Page;

    /** From the home page's link, on Gatehouse's sign-in page, and back home signed in. */
    async function signIn(email: string, password: string) {
      await own.goto(site);
      await own.getByRole('link', { name: 'Sign in' }).click();
      await own.getByLabel('Email').fill(email);
      await own.getByLabel('Password').fill(password);
      await own.getByRole('button', { name: 'Sign in', exact: true }).click();
      await own.locator('#server-gatehouse', { hasText: 'Signed in as Grace Hopper' }).waitFor();
    }

    it("keeps the app's own /account; Gatehouse's pages answer through nginx, not at /account", async () => {
      const signedOut = await fetch(`${site}/account`, { redirect: 'manual' });
      expect(signedOut.status).toBe(303);
      expect(signedOut.headers.get('location')).toBe('/api/auth/signin?callbackUrl=%2Faccount');
      const gatehouseAccount = await fetch(`${site}${pagesPath}`, { redirect: 'manual' });
      expect(gatehouseAccount.status).toBe(303);
      expect((await fetch(`${site}/api/account`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${guide.port(3000)}/account`)).status).toBe(404);
    });

    it("signs Grace up on Gatehouse's page from the app's link; the mailed link makes the account", async () => {
      own = await (await browser.newContext()).newPage();
      own.setDefaultTimeout(10_000);
      const mail = inbox(smtp, site);
      await own.goto(site);
      await own.getByRole('link', { name: 'Create an account' }).click();
      const since = mail.mark();
      await signUpOnGatehousePage(own);
      await confirmSignUp(
        own,
        await mail.link(grace.email, /Confirm your address/, `${pagesPath}/signup/confirm`, since),
        grace.password,
      );
      await signIn(grace.email, grace.password);
    });

    it("changes Grace's password on the app's /account, and her address on Gatehouse's account page from the mail", async () => {
      const mail = inbox(smtp, site);
      await own.getByRole('link', { name: 'Your account' }).click();
      expect(await own.locator('#account-email').innerText()).toBe(
        `${grace.name} · ${grace.email}`,
      );
      const change = (current: string) =>
        changePasswordIn(own.locator('#change-password'), current, grace.changed);
      // A wrong current password is refused in Gatehouse's words, on the app's page.
      await change('not her password at all');
      await expect.poll(() => own.getByRole('alert').innerText()).toMatch(/password/i);
      await change(grace.password);
      await said(own, 'Password changed');
      expect(new URL(own.url()).search).toBe('?done=password');

      await own.getByRole('link', { name: "Gatehouse's account page" }).click();
      expect(new URL(own.url()).pathname).toBe(pagesPath);
      await own.getByText('Change your address').click();
      await own.locator('#newEmail').fill(grace.newEmail);
      await own.locator('#emailPassword').fill(grace.changed);
      const since = mail.mark();
      await own.getByRole('button', { name: 'Change address' }).click();
      await said(own, 'We sent a link to the new address');
      await confirmNewAddressFromMail(own, mail, since);
      await own.goto(`${site}/account`);
      expect(await own.locator('#account-email').innerText()).toBe(
        `${grace.name} · ${grace.newEmail}`,
      );

      // Her sign-in (Gatehouse's page, through nginx), password change (the app's post_account)
      // and address confirmation, as Gatehouse recorded them: her browser and her network, not
      // the app's "Python-urllib" and loopback.
      await ways.expectRecordedAsVisitor(
        own,
        ['signin', 'password_changed', 'email_changed'],
        chromiumLook.network,
      );
    });

    it("resets Grace's forgotten password from the app's link to Gatehouse's page and the mailed link; she signs in with the new one", async () => {
      const mail = inbox(smtp, site);
      await own.goto(site);
      await own.getByRole('link', { name: 'Sign out' }).click();
      await own.getByRole('button', { name: 'Sign out' }).click();
      await own.locator('#server-gatehouse', { hasText: 'Not signed in' }).waitFor();
      await own.getByRole('link', { name: 'Forgot your password?' }).click();
      const since = mail.mark();
      await askResetOnGatehousePage(own, grace.newEmail);
      await resetFromLink(
        own,
        await mail.link(grace.newEmail, /Reset your/, `${pagesPath}/password/reset`, since),
        grace.reset,
      );
      await signIn(grace.newEmail, grace.reset);
      await own.context().close();
    });

    const signedInAs = (on: Page, name: string) =>
      on.locator('#server-gatehouse', { hasText: `Signed in as ${name}` }).waitFor();
    /** The home page's "Sign in": Gatehouse's sign-in page, on this origin. */
    const gatehouseSignIn = async (on: Page) => {
      await on.goto(site);
      await on.getByRole('link', { name: 'Sign in', exact: true }).click();
    };

    it("signs new people in the other ways: the home page's OpenID Connect provider button, and a mailed code from Gatehouse's sign-in page", async () => {
      idp.login({
        sub: 'sam-at-acme',
        email: 'sam@example.com',
        emailVerified: true,
        name: 'Sam Provider',
      });
      // The provider's button is the home page's; the mail form is Gatehouse's sign-in page's.
      const openSignIn = (on: Page, way: 'provider' | 'mail') =>
        way === 'provider' ? on.goto(site).then(() => undefined) : gatehouseSignIn(on);
      await ways.signInOtherWays(browser, openSignIn, signedInAs, {
        smtp,
        mailedTo: 'lin@example.com',
        mailField: 'Email',
        guide: 'python-guide',
      });
    });

    let ada: Awaited<ReturnType<typeof ways.turnOnTotpFor>>;

    it("with two-step sign-in on, Gatehouse's sign-in page asks for the code: a wrong one is refused in words, the right one brings Ada back home signed in", async () => {
      const gatehouse = `http://127.0.0.1:${guide.port(3000)}`;
      ada = await ways.turnOnTotpFor(gatehouse, site, 'ada@example.com', password);
      await gatehouseSignIn(page);
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await ways.passCodeStep(page, ada.secret, 'python-guide');
      await signedInAs(page, 'Ada Lovelace');
      expect(page.url()).toBe(`${site}/`);
    });

    it('while Gatehouse is down the app and nginx answer 503 with a page that says so; Gatehouse starts again with SECOND_FACTOR=required', async () => {
      await ways.downThenRequired(guide, browser, {
        origin: site,
        paths: ['/', '/dashboard', '/api/auth/signin'],
        // The app's log says why, with the cause.
        logged: /GET \/: Gatehouse is not answering: .*Connection refused/,
        name: 'python-guide',
      });
    });

    it("with SECOND_FACTOR=required, Grace (no second factor) sets up her app on Gatehouse's enrolment step with the mailed code; her recovery codes follow, then home, signed in", async () => {
      own = await (await browser.newContext()).newPage();
      own.setDefaultTimeout(10_000);
      await gatehouseSignIn(own);
      await own.getByLabel('Email').fill(grace.newEmail);
      await own.getByLabel('Password').fill(grace.reset);
      const since = smtp.received.length;
      await own.getByRole('button', { name: 'Sign in', exact: true }).click();
      await ways.passEnrolmentStep(own, smtp, {
        email: grace.newEmail,
        since,
        guide: 'python-guide',
      });
      await signedInAs(own, 'Grace Hopper');
      expect(own.url()).toBe(`${site}/`);
      await own.context().close();
    });
  },
);
