import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  changePasswordIn,
  confirmNewAddressFromMail,
  confirmSignUp,
  grace,
  inbox,
  pagesPath,
  resetFromLink,
  said,
} from '../helpers/account-journey.js';
import { postWithCsrf } from '../helpers/account-requests.js';
import { screenVariants } from '../helpers/chromium.js';
import { Client } from '../helpers/client.js';
import { nginxPath } from '../helpers/nginx.js';
import { startIdentityProvider, type IdentityProvider } from '../helpers/oidc-idp.js';
import { LoopbackSmtp } from '../helpers/smtp.js';
import { stepMs, turnOnTotpNow, unspentCode } from '../helpers/totp-codes.js';
import { examplePaths, followGuide, guideShape, root, type GuideRun } from './follow-guide.js';

// docs/integrate-spa.md, followed as written (test/examples/follow-guide.ts says how): the page
// through Vite's dev-server proxy, then its build behind nginx, each driven in Chromium; behind
// nginx, Grace takes the page's self-service forms, her mail read from a loopback catcher, Ada
// signs in with her authenticator app's code, a new person comes in through an OpenID Connect
// provider on loopback and then by a mailed code, and, Gatehouse restarted once with
// SECOND_FACTOR=required, Grace sets up her app on the page. Screenshots (light, dark, a 390 px
// phone) go to test-artifacts/spa-guide/.

const guidePath = 'docs/integrate-spa.md';
const exampleDir = 'examples/spa';
const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
const artifacts = path.join(root, 'test-artifacts/spa-guide');
/** The app's client at the OpenID Connect provider the test runs. */
const oidcClient = { clientId: 'my-app', clientSecret: 'my-app-client-secret-0123456789' };
const missing = [chromiumPath, nginxPath].filter((file) => !fs.existsSync(file));

describe(`${guidePath} shows ${exampleDir}`, () => {
  const { runs, shown, stale } = guideShape(guidePath);

  it('every file block is its file, byte for byte (node scripts/build/sync-guide.ts rewrites them)', () => {
    expect(stale).toEqual([]);
  });

  it('shows every file of the example whole, but its README and lockfile', () => {
    expect(shown).toEqual(examplePaths(exampleDir, ['README.md', 'package-lock.json']));
  });

  it('marks the commands this test follows: Gatehouse, a user, install, dev server, build, Gatehouse again, nginx', () => {
    expect(runs).toEqual([
      'gatehouse server',
      'gatehouse command',
      'my-app install',
      'my-app server',
      'my-app build',
      'gatehouse server',
      'my-app server',
    ]);
  });
});

/** A six-digit code none of whose window (the step before now to two after) is `secret`'s. */
function wrongCodeNow(secret: Secret): string {
  const window = new Set(
    [-1, 0, 1, 2].map((n) => TOTP.generate({ secret, timestamp: Date.now() + n * stepMs })),
  );
  let wrong = '000000';
  for (let n = 1; window.has(wrong); n += 1) wrong = String(n).padStart(6, '0');
  return wrong;
}

/**
 * Screenshots of `page` as it is, light, dark and on a 390 px phone
 * (test-artifacts/spa-guide/<variant>-<name>.png); the phone's must not scroll sideways.
 */
async function shots(page: Page, name: string): Promise<void> {
  const viewport = page.viewportSize();
  for (const variant of screenVariants) {
    await page.setViewportSize(variant.viewport);
    await page.emulateMedia({ colorScheme: variant.colorScheme });
    await page.screenshot({
      path: path.join(artifacts, `${variant.name}-${name}.png`),
      fullPage: true,
    });
    expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBe(
      variant.viewport.width,
    );
  }
  if (viewport) await page.setViewportSize(viewport);
  await page.emulateMedia({ colorScheme: 'light' });
}

describe.skipIf(missing.length > 0)(
  missing.length === 0
    ? `following ${guidePath} to a signed-in single-page app`
    : `following ${guidePath} (skipped: ${missing.join(' and ')} not installed)`,
  () => {
    let guide: GuideRun;
    let browser: Browser;
    let smtp: LoopbackSmtp;
    let idp: IdentityProvider;

    beforeAll(async () => {
      fs.mkdirSync(artifacts, { recursive: true });
      [smtp, idp] = await Promise.all([LoopbackSmtp.start(), startIdentityProvider()]);
      guide = await followGuide({
        name: 'spa',
        guidePath,
        exampleDir,
        ports: [3000, 5173, 8080],
        serverPorts: [5173, 8080],
        gatehouseEnv: {
          SMTP_URL: smtp.url,
          MAIL_FROM: 'My app <no-reply@example.com>',
          // The guide's "Sign in with Google, GitHub or any OpenID Connect provider", set here.
          AUTH_OIDC_ISSUER: idp.issuer,
          AUTH_OIDC_ID: oidcClient.clientId,
          AUTH_OIDC_SECRET: oidcClient.clientSecret,
          AUTH_OIDC_NAME: 'Acme SSO',
          // The guide's "Sign in by e-mail", set here.
          EMAIL_SIGNIN: 'on',
        },
      });
      idp.setClients([
        {
          ...oidcClient,
          redirectUris: [5173, 8080].map((at) => `${guide.origin(at)}/api/auth/callback/oidc`),
        },
      ]);
      // Up to the dev server; the build, Gatehouse's restart and nginx come after its test.
      await guide.run(4);
      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
    }, 180_000);

    afterAll(async () => {
      console.log(`spa guide steps, ms: ${JSON.stringify(guide?.timings)}`);
      await browser?.close();
      await guide?.stop();
      await smtp?.close();
      await idp?.close();
    });

    /** Signs in and out on the page at `origin`, checking what the guide says on the way. */
    async function signInAndOut(origin: string, start: string) {
      const context: BrowserContext = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${origin}${start}`);
      const who = page.locator('#who');
      await page.locator('#who', { hasText: 'Not signed in' }).waitFor();
      expect(await page.locator('#signed-in').isHidden()).toBe(true);

      // The sign-up and forgot-password forms beside it have an Email field too.
      const signInForm = page.locator('#sign-in');
      await signInForm.getByLabel('Email').fill('ada@example.com');
      await signInForm.getByLabel('Password').fill('not the password at all');
      await signInForm.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
      expect(await who.innerText()).toBe('Not signed in');

      await signInForm.getByLabel('Password').fill(password);
      await signInForm.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('#who', { hasText: 'Ada Lovelace' }).waitFor();
      expect(await who.innerText()).toMatch(/^Signed in as Ada Lovelace \(id [0-9a-f-]{8,}\)$/);
      expect(await page.locator('#dashboard').innerText()).toContain('Ada Lovelace');
      expect(await page.getByRole('alert').count()).toBe(0);
      const cookie = (await context.cookies()).find((c) => c.name === 'authjs.session-token');
      expect(cookie?.httpOnly).toBe(true);
      const copied = `${cookie?.name}=${cookie?.value}`;

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.locator('#who', { hasText: 'Not signed in' }).waitFor();
      expect(await page.locator('#signed-in').isHidden()).toBe(true);
      const after = await fetch(`${origin}/api/auth/session`, { headers: { cookie: copied } });
      expect(await after.json()).toBeNull();
      await context.close();
    }

    it("through Vite's dev-server proxy: signs in, shows the signed-in part, signs out", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await signInAndOut(guide.origin(5173), '/');
    });

    it("Vite's dev server prints http://localhost:5173, and sends a visit on http://127.0.0.1:5173 there", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const vite = guide.output();
      expect(vite).toContain(`http://localhost:${guide.port(5173)}/`);
      expect(vite).not.toContain(`http://127.0.0.1:${guide.port(5173)}`);
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${guide.port(5173)}/account`);
      expect(page.url()).toBe(`${guide.origin(5173)}/account`);
      await page.locator('#who', { hasText: 'Not signed in' }).waitFor();
      await page.close();
    });

    it('built, behind nginx: the same, from a client-side route', async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await guide.run();
      await signInAndOut(guide.origin(8080), '/dashboard');
    }, 60_000);

    it("opened on another origin than AUTH_URL's (nginx at 127.0.0.1), the page says in words where to open it", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const page = await browser.newPage();
      const thrown: string[] = [];
      page.on('pageerror', (error) => thrown.push(error.message));
      await page.goto(`http://127.0.0.1:${guide.port(8080)}/`);
      const form = page.locator('#sign-in');
      await form.getByLabel('Email').fill('ada@example.com');
      await form.getByLabel('Password').fill(password);
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: `another site: open this app at ${guide.origin(8080)}` })
        .waitFor();
      expect(thrown).toEqual([]);
      await page.close();
    });

    let own: Page;
    let site = '';
    let ada: Page;
    let recoveryCodes: string[] = [];

    /** Signs in on the page's own form and waits for the page to say who. */
    async function signIn(email: string, password: string) {
      await own.goto(site);
      await own.locator('#who', { hasText: 'Not signed in' }).waitFor();
      const form = own.locator('#sign-in');
      await form.getByLabel('Email').fill(email);
      await form.getByLabel('Password').fill(password);
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      await own.locator('#who', { hasText: 'Signed in as Grace Hopper' }).waitFor();
    }

    it("behind nginx, signs Grace up with the page's form; the mailed link opens Gatehouse's page, which makes the account", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      site = guide.origin(8080);
      // Gatehouse's own pages, linked as the other way, answer on the page's origin.
      for (const path of [`${pagesPath}/signup`, `${pagesPath}/password/forgot`])
        expect((await fetch(`${site}${path}`)).status).toBe(200);
      own = await (await browser.newContext()).newPage();
      own.setDefaultTimeout(10_000);
      const mail = inbox(smtp, site);
      await own.goto(site);
      const form = own.locator('#sign-up');
      await form.getByLabel('Name').fill(grace.name);
      await form.getByLabel('Email').fill(grace.email);
      await form.getByLabel('Password').fill(grace.password);
      const since = mail.mark();
      await form.getByRole('button', { name: 'Sign up' }).click();
      await said(own, 'Check your inbox');
      await confirmSignUp(
        own,
        await mail.link(grace.email, /Confirm your address/, `${pagesPath}/signup/confirm`, since),
        grace.password,
      );
      await signIn(grace.email, grace.password);
    });

    it("changes Grace's password and address on the page's /account; the new address is confirmed from the mail", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const mail = inbox(smtp, site);
      await own.getByRole('link', { name: 'Your account' }).click();
      await own.locator('#account-email', { hasText: grace.email }).waitFor();
      expect(new URL(own.url()).pathname).toBe('/account');

      await changePasswordIn(own.locator('#change-password'), grace.password, grace.changed);
      await said(own, 'Password changed');

      const address = own.locator('#change-email');
      await address.getByLabel('New address').fill(grace.newEmail);
      await address.getByLabel('Password').fill(grace.changed);
      const since = mail.mark();
      await address.getByRole('button', { name: 'Change address' }).click();
      await said(own, `We have mailed a link to ${grace.newEmail}`);
      await confirmNewAddressFromMail(own, mail, since);
      await own.goto(`${site}/account`);
      await own.locator('#account-email', { hasText: grace.newEmail }).waitFor();
    });

    it("resets Grace's forgotten password with the page's form and the mailed link to Gatehouse's page; she signs in with the new one", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      const mail = inbox(smtp, site);
      await own.getByRole('button', { name: 'Sign out' }).click();
      await own.locator('#who', { hasText: 'Not signed in' }).waitFor();
      const forgot = own.locator('#forgot');
      await forgot.getByLabel('Email').fill(grace.newEmail);
      const since = mail.mark();
      await forgot.getByRole('button', { name: 'Mail me a link' }).click();
      await said(own, 'If an account exists');
      await resetFromLink(
        own,
        await mail.link(grace.newEmail, /Reset your/, `${pagesPath}/password/reset`, since),
        grace.reset,
      );
      // Gatehouse's pages carry the app's name (PAGE_PRODUCT_NAME), lead back to the app
      // (APP_URL) and sign in on the app's own form (APP_SIGNIN_URL).
      for (const name of ['Back to My app', 'Sign in'])
        expect(await own.getByRole('link', { name, exact: true }).getAttribute('href')).toBe('/');
      await signIn(grace.newEmail, grace.reset);
      await own.context().close();
    });

    it("with TOTP on, Ada's sign-in asks for her app's code: a wrong one refused in words, one sent too late sends her back to the password, the right one signs in, the password never sent with a code", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      // Ada turns TOTP on through Gatehouse's API, and makes recovery codes.
      const api = new Client(`http://127.0.0.1:${guide.port(3000)}`, { origin: site });
      expect((await api.signIn('ada@example.com', password)).status).toBe(200);
      const secret = await turnOnTotpNow(api);
      const made = await postWithCsrf(api, '/api/account/recovery-codes', {});
      recoveryCodes = ((await made.json()) as { recoveryCodes: string[] }).recoveryCodes;

      ada = await (await browser.newContext()).newPage();
      ada.setDefaultTimeout(10_000);
      const posts: string[] = [];
      ada.on('request', (request) => {
        if (new URL(request.url()).pathname === '/api/auth/callback/credentials')
          posts.push(request.postData() ?? '');
      });
      await ada.goto(site);
      await ada.locator('#who', { hasText: 'Not signed in' }).waitFor();
      // The other ways in Gatehouse lists: the provider's button, the mailed link's form.
      await ada.getByRole('button', { name: 'Continue with Acme SSO' }).waitFor();
      await ada.getByRole('button', { name: 'Email me a sign-in link' }).waitFor();
      await shots(ada, '1-ways-in');
      const form = ada.locator('#sign-in');
      const withPassword = async () => {
        await form.getByLabel('Email').fill('ada@example.com');
        await form.getByLabel('Password').fill(password);
        await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      };
      await withPassword();
      const step = ada.locator('#second-step');
      const code = step.getByLabel('Code from your authenticator app');
      // The second step's cookie gone (its five minutes passed): back to the password.
      await code.waitFor();
      await ada.context().clearCookies({ name: 'gatehouse.second-step' });
      await code.fill(wrongCodeNow(secret));
      await step.getByRole('button', { name: 'Verify' }).click();
      await ada.getByRole('alert').filter({ hasText: 'That took too long' }).waitFor();
      await withPassword();
      await code.fill(wrongCodeNow(secret));
      await step.getByRole('button', { name: 'Verify' }).click();
      await ada.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
      await shots(ada, '2-code-step-wrong-code');
      await code.fill(unspentCode(secret));
      await step.getByRole('button', { name: 'Verify' }).click();
      await ada.locator('#who', { hasText: 'Signed in as Ada Lovelace' }).waitFor();
      expect(await ada.getByRole('alert').count()).toBe(0);
      ada.removeAllListeners('request');
      expect(posts.map((post) => [...new URLSearchParams(post).keys()].sort())).toEqual([
        ['csrfToken', 'email', 'password'],
        ['csrfToken', 'otp'],
        ['csrfToken', 'email', 'password'],
        ['csrfToken', 'otp'],
        ['csrfToken', 'otp'],
      ]);
    });

    it("Ada's change of address asks for her code: without it the form says why, with a recovery code it is done", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await ada.getByRole('link', { name: 'Your account' }).click();
      const form = ada.locator('#change-email');
      /** Sends the page's form with Ada's new address, her password and `code` (or none). */
      const changeAddress = async (code: string) => {
        const fields: [label: string, value: string][] = [
          ['New address', 'ada.lovelace@example.com'],
          ['Your password', password],
          ['Code from your authenticator app, if you use two-step sign-in', code],
        ];
        for (const [label, value] of fields) await form.getByLabel(label).fill(value);
        await form.getByRole('button', { name: 'Change address' }).click();
      };
      // Gatehouse's refusal, as it words it, on the form.
      await changeAddress('');
      await said(ada, 'Your account has two-step sign-in: enter the code');
      await shots(ada, '3-change-address-without-code');
      // Her app's codes of this step are spent: one of her recovery codes.
      await changeAddress(recoveryCodes[0]!);
      await said(ada, 'We have mailed a link to ada.lovelace@example.com');
      await ada.context().close();
    });

    it("signs a new person in with the OpenID Connect provider's button, then by the code of a mailed link on Gatehouse's page", async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      idp.login({
        sub: 'sam',
        email: 'sam@example.com',
        emailVerified: true,
        name: 'Sam Provider',
      });
      const sam = await (await browser.newContext()).newPage();
      sam.setDefaultTimeout(10_000);
      await sam.goto(site);
      await sam.getByRole('button', { name: 'Continue with Acme SSO' }).click();
      await sam.locator('#who', { hasText: 'Signed in as Sam Provider' }).waitFor();
      await sam.getByRole('button', { name: 'Sign out' }).click();
      await sam.locator('#who', { hasText: 'Not signed in' }).waitFor();

      // Sam has no password: the mail's code, on Gatehouse's "check your inbox" page.
      await sam.getByLabel('Or send a sign-in link to').fill('sam@example.com');
      const since = smtp.received.length;
      await sam.getByRole('button', { name: 'Email me a sign-in link' }).click();
      await sam.waitForURL(`${site}/api/auth/verify-request?provider=email&type=email`);
      expect(await sam.locator('body').innerText()).toContain('My app');
      const mail = await smtp.mailTo('sam@example.com', since, /Sign in to My app/);
      const code = /enter this code on the page: ([A-Z0-9]+)/.exec(mail.parsed.text ?? '')?.[1];
      await sam.getByLabel('Code from the mail').fill(code ?? '');
      await sam.getByRole('button', { name: 'Sign in with the code' }).click();
      await sam.locator('#who', { hasText: 'Signed in as Sam Provider' }).waitFor();
      await sam.context().close();
    });

    it('with SECOND_FACTOR=required, Grace (no second factor) sets up her app on the page with the code from her mail, wrong codes refused in words, and is signed in', async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await guide.restartGatehouse({
        SECOND_FACTOR: 'required',
        FACTOR_KEY: randomBytes(33).toString('base64'),
      });
      const enrol = await (await browser.newContext()).newPage();
      enrol.setDefaultTimeout(10_000);
      await enrol.goto(site);
      const form = enrol.locator('#sign-in');
      await form.getByLabel('Email').fill(grace.newEmail);
      await form.getByLabel('Password').fill(grace.reset);
      const since = smtp.received.length;
      await form.getByRole('button', { name: 'Sign in', exact: true }).click();
      const qr = enrol.getByRole('img', { name: 'QR code of the key for your authenticator app' });
      await qr.waitFor();
      // Drawn as an image (the data: URL loaded), not left broken.
      expect(await qr.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
      const key = (await enrol.locator('#app-key').innerText()).replaceAll(' ', '');
      const secret = Secret.fromBase32(key);
      await shots(enrol, '4-enrolment-step');

      const mailed = await smtp.mailTo(grace.newEmail, since, /set up two-step sign-in/);
      const emailCode = /Your code: ([A-Z0-9]{8})/.exec(mailed.parsed.text ?? '')?.[1] ?? '';
      const step = enrol.locator('#enrol');
      const fromMail = step.getByLabel(`Code we mailed to ${grace.newEmail}`);
      const code = step.getByLabel('Code your app shows now');
      await fromMail.fill('AAAAAAAA');
      await code.fill(TOTP.generate({ secret }));
      await step.getByRole('button', { name: 'Verify' }).click();
      await enrol.getByRole('alert').filter({ hasText: 'not the code we mailed you' }).waitFor();
      await fromMail.fill(emailCode);
      await code.fill(wrongCodeNow(secret));
      await step.getByRole('button', { name: 'Verify' }).click();
      await enrol.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
      await shots(enrol, '5-enrolment-wrong-code');
      await code.fill(TOTP.generate({ secret }));
      await step.getByRole('button', { name: 'Verify' }).click();
      await enrol.locator('#who', { hasText: 'Signed in as Grace Hopper' }).waitFor();
      // The answer's ten recovery codes, shown this once.
      expect((await enrol.locator('#recovery-codes').innerText()).split('\n')).toHaveLength(10);
      await shots(enrol, '6-enrolled-recovery-codes');
      await enrol.context().close();
    });
  },
);
