import fs from 'node:fs';
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
import { startIdentityProvider, type IdentityProvider } from '../helpers/oidc-idp.js';
import { LoopbackSmtp } from '../helpers/smtp.js';
import { unspentCode } from '../helpers/totp-codes.js';
import { examplePaths, followGuide, guideShape, type GuideRun } from './follow-guide.js';
import * as tokens from './token-checks.js';
import {
  browserThroughNetwork,
  expectRecordedAsVisitor,
  oidcSecret,
  passCodeStep,
  passEnrolmentStep,
  productName,
  shots,
  signInOtherWays,
  downThenRequired,
  turnOnTotpFor,
  waysInEnv,
  wrongCode,
} from './ways-in.js';

// docs/integrate-express.md, followed as written (test/examples/follow-guide.ts says how), then
// driven in Chromium: Ada signs in and out, and the app's /api/me takes her session's token
// (test/examples/token-checks.ts); Grace signs up, changes her password and address on the app's
// own /account and resets a forgotten password, each mailed link read from a loopback catcher;
// then issue 41's: two-step sign-in (the code step, the enrolment step under
// SECOND_FACTOR=required), the other ways in (a provider, a mailed code), the visitor's device and
// network as Gatehouse records them, and the app's page while Gatehouse is down (test/examples/
// ways-in.ts). Some 20 seconds once the example's install is cached.

const guidePath = 'docs/integrate-express.md';
const exampleDir = 'examples/express';
const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';

describe(`${guidePath} shows ${exampleDir}`, () => {
  const { runs, shown, stale } = guideShape(guidePath);

  it('every file block is its file, byte for byte (node scripts/build/sync-guide.ts rewrites them)', () => {
    expect(stale).toEqual([]);
  });

  it('shows every file of the example whole, but its README and lockfile', () => {
    expect(shown).toEqual(examplePaths(exampleDir, ['README.md', 'package-lock.json']));
  });

  it('marks the commands this test follows: Gatehouse, a user, install, secret, start', () => {
    expect(runs).toEqual([
      'gatehouse server',
      'gatehouse command',
      'my-app install',
      'my-app command',
      'my-app server',
    ]);
  });
});

describe.skipIf(!fs.existsSync(chromiumPath))(
  fs.existsSync(chromiumPath)
    ? `following ${guidePath} to a signed-in Express app`
    : `following ${guidePath} (skipped: chromium (${chromiumPath}) not installed)`,
  () => {
    let guide: GuideRun;
    let browser: Browser;
    let page: Page;
    let app = '';
    let copiedCookie = '';
    let smtp: LoopbackSmtp;
    let keys: tokens.TokenKeys;
    let adaToken = '';
    let idp: IdentityProvider;
    const chromiumLook = browserThroughNetwork(chromiumPath);
    const shot = (on: Page, name: string) => shots(on, 'express-guide', name);

    beforeAll(async () => {
      smtp = await LoopbackSmtp.start();
      keys = tokens.tokenKeys();
      idp = await startIdentityProvider();
      guide = await followGuide({
        name: 'express',
        guidePath,
        exampleDir,
        ports: [3000, 3001],
        serverPorts: [3001],
        gatehouseEnv: {
          SMTP_URL: smtp.url,
          MAIL_FROM: 'My app <no-reply@example.com>',
          ...keys.gatehouseEnv,
          ...waysInEnv(idp.issuer),
        },
      });
      app = guide.origin(3001);
      idp.setClients([
        {
          clientId: 'my-app',
          clientSecret: oidcSecret,
          redirectUris: [`${app}/api/auth/callback/oidc`],
        },
      ]);
      await guide.run();
      browser = await chromium.launch(chromiumLook.launch);
      page = await browser.newPage();
      console.log(`express guide steps, ms: ${JSON.stringify(guide.timings)}`);
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      await guide?.stop();
      await smtp?.close();
      await idp?.close();
      keys?.dispose();
    });

    const text = (id: string, on = page) => on.locator(`#${id}`).innerText();

    it('sends a signed-out visitor from the protected page to the home page', async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await page.goto(`${app}/dashboard`);
      expect(new URL(page.url()).pathname).toBe('/');
      expect(await text('server-decoded')).toBe('Not signed in');
      expect(await text('server-gatehouse')).toBe('Not signed in');
    });

    it("refuses a wrong password: Gatehouse's sign-in page, on the app's origin, says so", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      // With an X-Forwarded-For of its own, which the app does not pass on (it trusts no proxy
      // here): Gatehouse records the address that connected to the app (below).
      await page.setExtraHTTPHeaders({ 'x-forwarded-for': '203.0.113.9' });
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByText('Wrong email or password').first().waitFor();
      await page.setExtraHTTPHeaders({});
      const url = new URL(page.url());
      expect(url.origin).toBe(app);
      expect(url.pathname).toBe('/api/auth/signin');
      // The guide's PAGE_PRODUCT_NAME and APP_URL: the app's name, and the way back to it.
      await page.getByRole('heading', { name: `Sign in to ${productName}` }).waitFor();
      await page.getByRole('link', { name: `Back to ${productName}` }).click();
      expect(page.url()).toBe(`${app}/`);
    });

    it("signs in as Ada on the app's own form: both readers say so, with the same id", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await page.goto(app);
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('#server-gatehouse', { hasText: 'Ada Lovelace' }).waitFor();
      const decoded = await text('server-decoded');
      expect(decoded).toMatch(/^Signed in as Ada Lovelace \(id [0-9a-f-]{8,}\)$/);
      expect(await text('server-gatehouse')).toBe(decoded);
      const cookie = (await page.context().cookies()).find(
        (c) => c.name === 'authjs.session-token',
      );
      expect(cookie?.httpOnly).toBe(true);
      copiedCookie = `${cookie?.name}=${cookie?.value}`;
      // Her refusal and her sign-in, as Gatehouse recorded them: her browser and network, not the
      // app's ("node", loopback), nor the address her browser claimed.
      await expectRecordedAsVisitor(page, ['signin_failed', 'signin'], chromiumLook.network);
    });

    it('opens the protected page for Ada', async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await page.getByRole('link', { name: 'Dashboard' }).click();
      expect(await text('dashboard')).toContain('Ada Lovelace, this page is yours');
      await page.getByRole('link', { name: 'Home' }).click();
    });

    it("/api/me takes the token Ada's page gets from /api/auth/token, and answers who she is", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const id = /\(id (\S+)\)$/.exec(await text('server-gatehouse'))?.[1];
      const { token, status, body } = await tokens.callFromPage(page, '/api/me');
      expect([status, body]).toMatchObject([
        200,
        { id, email: 'ada@example.com', name: 'Ada Lovelace', amr: ['pwd'] },
      ]);
      adaToken = token;
    });

    it("/api/me takes the token a personal access token of Ada's gets, for a script", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const { status, body } = await tokens.callWithAccessToken(page, app, `${app}/api/me`);
      expect([status, body]).toMatchObject([200, { id: decodeJwt(adaToken).sub, amr: ['pat'] }]);
    });

    it('/api/me refuses no token, a changed or forged one, one for another issuer or audience, and an expired one, saying why', async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await tokens.expectRefusals(`${app}/api/me`, adaToken, keys);
    });

    it('signs out; a cookie copied before reads as no session when asking Gatehouse, as Ada when decoded', async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.locator('#server-gatehouse', { hasText: 'Not signed in' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/');
      expect(await text('server-decoded')).toBe('Not signed in');

      const home = await (await fetch(app, { headers: { cookie: copiedCookie } })).text();
      expect(home).toContain('<span id="server-gatehouse">Not signed in</span>');
      expect(home).toMatch(/<span id="server-decoded">Signed in as Ada Lovelace/);
      const dashboard = await fetch(`${app}/dashboard`, {
        headers: { cookie: copiedCookie },
        redirect: 'manual',
      });
      expect(dashboard.status).toBe(303);
    });

    it("after sign-out Ada's token is inactive on introspection at once; /api/me takes it until it expires, not after", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const ended = {
        gatehouse: `http://127.0.0.1:${guide.port(3000)}`,
        appOrigin: app,
        cookie: copiedCookie,
      };
      await tokens.expectRevocationBound(`${app}/api/me`, adaToken, ended, keys);
    });

    let own: Page;

    it("keeps the app's own /account; Gatehouse's pages answer through the forwarder, not at /account", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const signedOut = await fetch(`${app}/account`, { redirect: 'manual' });
      expect(signedOut.status).toBe(303);
      expect(signedOut.headers.get('location')).toBe('/');
      const gatehouseAccount = await fetch(`${app}${pagesPath}`, { redirect: 'manual' });
      expect(gatehouseAccount.status).toBe(303);
      expect(new URL(gatehouseAccount.headers.get('location') ?? '').pathname).toBe(
        '/api/auth/signin',
      );
      expect((await fetch(`${app}/api/account`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${guide.port(3000)}/account`)).status).toBe(404);
    });

    it("signs Grace up on Gatehouse's page from the app's link; the mailed link makes the account; she signs in on the app's form", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      own = await (await browser.newContext()).newPage();
      own.setDefaultTimeout(10_000);
      const mail = inbox(smtp, app);
      await own.goto(app);
      await own.getByRole('link', { name: 'Create an account' }).click();
      const since = mail.mark();
      await signUpOnGatehousePage(own);
      const link = await mail.link(
        grace.email,
        /Confirm your address/,
        `${pagesPath}/signup/confirm`,
        since,
      );
      await confirmSignUp(own, link, grace.password);

      await own.goto(app);
      await own.getByLabel('Email').fill(grace.email);
      await own.getByLabel('Password').fill(grace.password);
      await own.getByRole('button', { name: 'Sign in', exact: true }).click();
      await own.locator('#server-gatehouse', { hasText: 'Signed in as Grace Hopper' }).waitFor();
    });

    it("changes Grace's password and address on the app's own /account, posted on by the server; the new address is confirmed from the mail", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const mail = inbox(smtp, app);
      await own.getByRole('link', { name: 'Your account' }).click();
      expect(await text('account-email', own)).toBe(`${grace.name} · ${grace.email}`);

      await changePasswordIn(own.locator('#change-password'), grace.password, grace.changed);
      await said(own, 'Password changed');
      expect(new URL(own.url()).pathname).toBe('/account');

      // A wrong password is refused in Gatehouse's words, on the app's page.
      const address = own.locator('#change-email');
      await address.getByLabel('New address').fill(grace.newEmail);
      await address.getByLabel('Password').fill(grace.password);
      await address.getByRole('button', { name: 'Change address' }).click();
      await expect.poll(() => own.getByRole('alert').innerText()).toMatch(/password/i);

      await address.getByLabel('New address').fill(grace.newEmail);
      await address.getByLabel('Password').fill(grace.changed);
      const since = mail.mark();
      await address.getByRole('button', { name: 'Change address' }).click();
      await said(own, 'We have mailed a link to your new address');
      await confirmNewAddressFromMail(own, mail, since);
      await own.goto(`${app}/account`);
      expect(await text('account-email', own)).toBe(`${grace.name} · ${grace.newEmail}`);

      // Her sign-in (the forwarder), password change (postAccount) and address confirmation, as
      // Gatehouse recorded them: her browser and her network, not the app's "node" and loopback.
      await expectRecordedAsVisitor(
        own,
        ['signin', 'password_changed', 'email_changed'],
        chromiumLook.network,
      );
    });

    it("resets Grace's forgotten password from the app's link to Gatehouse's page and the mailed link; she signs in with the new one", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const mail = inbox(smtp, app);
      await own.goto(app);
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

      await own.goto(app);
      await own.getByLabel('Email').fill(grace.newEmail);
      await own.getByLabel('Password').fill(grace.reset);
      await own.getByRole('button', { name: 'Sign in', exact: true }).click();
      await own.locator('#server-gatehouse', { hasText: 'Signed in as Grace Hopper' }).waitFor();
      await own.context().close();
    });

    const signedInAs = (on: Page, name: string) =>
      on.locator('#server-gatehouse', { hasText: `Signed in as ${name}` }).waitFor();

    it("signs new people in the other ways the app's page offers: an OpenID Connect provider's button, and a mailed code typed on Gatehouse's page", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      idp.login({
        sub: 'sam-at-acme',
        email: 'sam@example.com',
        emailVerified: true,
        name: 'Sam Provider',
      });
      const openSignIn = async (on: Page) => {
        await on.goto(app);
      };
      await signInOtherWays(browser, openSignIn, signedInAs, {
        smtp,
        mailedTo: 'lin@example.com',
        mailField: 'Or send a sign-in link to',
        guide: 'express-guide',
      });
      // The link to Gatehouse's sign-in page offers every way in, passkeys too, and comes back.
      const other = await (await browser.newContext()).newPage();
      await other.goto(app);
      await shot(other, 'home-ways-in');
      await other.getByRole('link', { name: 'Other ways to sign in' }).click();
      await other.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
      expect(new URL(other.url()).searchParams.get('callbackUrl')).toBe('/');
      await other.context().close();
    });

    let ada: Awaited<ReturnType<typeof turnOnTotpFor>>;

    it("with two-step sign-in on, the app's form leads to Gatehouse's code step: a wrong code is refused in words, the right one lands back on the app signed in", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const gatehouse = `http://127.0.0.1:${guide.port(3000)}`;
      ada = await turnOnTotpFor(gatehouse, app, 'ada@example.com', password);
      await page.goto(app);
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await passCodeStep(page, ada.secret, 'express-guide');
      await signedInAs(page, 'Ada Lovelace');
      expect(page.url()).toBe(`${app}/`);
    });

    it("Ada's address change asks for her code: without it the form says why, a wrong one is refused, a recovery code proves it", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await page.goto(`${app}/account`);
      const address = page.locator('#change-email');
      const code = address.getByLabel('Code from your authenticator app');
      const send = async (typed: string) => {
        await address.getByLabel('New address').fill('ada.lovelace@example.com');
        await address.getByLabel('Password').fill(password);
        await code.fill(typed);
        await address.getByRole('button', { name: 'Change address' }).click();
      };
      await send('');
      await said(
        page,
        'Your account has two-step sign-in: enter the code your authenticator app shows',
      );
      await shot(page, 'account-code-needed');
      await send(wrongCode(ada.secret));
      await said(page, 'That code is not right');
      await send(ada.recoveryCodes[0]!);
      await said(page, 'We have mailed a link to your new address');
    });

    it('while Gatehouse is down the app answers 503 with a page that says so, not a bare 500; Gatehouse starts again with SECOND_FACTOR=required', async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await downThenRequired(guide, browser, {
        origin: app,
        paths: ['/', '/account', '/api/auth/signin'],
        // The app's log says why, with the cause.
        logged: /GET \/: Gatehouse \(http:\/\/127\.0\.0\.1:\d+\) is not answering[^]*ECONNREFUSED/,
        name: 'express-guide',
      });
    });

    it("with SECOND_FACTOR=required, Grace (no second factor) sets up her app on Gatehouse's enrolment step from the app's form, with the mailed code; her recovery codes follow, then the app, signed in; her address change takes her app's code", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const enrol = await (await browser.newContext()).newPage();
      enrol.setDefaultTimeout(10_000);
      await enrol.goto(app);
      await enrol.getByLabel('Email').fill(grace.newEmail);
      await enrol.getByLabel('Password').fill(grace.reset);
      const since = smtp.received.length;
      await enrol.getByRole('button', { name: 'Sign in', exact: true }).click();
      const secret = await passEnrolmentStep(enrol, smtp, {
        email: grace.newEmail,
        since,
        guide: 'express-guide',
      });
      await signedInAs(enrol, 'Grace Hopper');
      expect(enrol.url()).toBe(`${app}/`);

      await enrol.goto(`${app}/account`);
      const address = enrol.locator('#change-email');
      await address.getByLabel('New address').fill('grace.h@example.com');
      await address.getByLabel('Password').fill(grace.reset);
      await address.getByLabel('Code from your authenticator app').fill(unspentCode(secret));
      await address.getByRole('button', { name: 'Change address' }).click();
      await said(enrol, 'We have mailed a link to your new address');
      await shot(enrol, 'account-page');
      await enrol.context().close();
    });
  },
);
