import fs from 'node:fs';
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
import { nginxPath } from '../helpers/nginx.js';
import { LoopbackSmtp } from '../helpers/smtp.js';
import { examplePaths, followGuide, guideShape, type GuideRun } from './follow-guide.js';

// docs/integrate-spa.md, followed as written (test/examples/follow-guide.ts says how): the page
// through Vite's dev-server proxy, then its build behind nginx, each driven in Chromium; behind
// nginx, Grace takes the page's self-service forms, her mail read from a loopback catcher.

const guidePath = 'docs/integrate-spa.md';
const exampleDir = 'examples/spa';
const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
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

describe.skipIf(missing.length > 0)(
  missing.length === 0
    ? `following ${guidePath} to a signed-in single-page app`
    : `following ${guidePath} (skipped: ${missing.join(' and ')} not installed)`,
  () => {
    let guide: GuideRun;
    let browser: Browser;
    let smtp: LoopbackSmtp;

    beforeAll(async () => {
      smtp = await LoopbackSmtp.start();
      guide = await followGuide({
        name: 'spa',
        guidePath,
        exampleDir,
        ports: [3000, 5173, 8080],
        serverPorts: [5173, 8080],
        gatehouseEnv: { SMTP_URL: smtp.url, MAIL_FROM: 'My app <no-reply@example.com>' },
      });
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
      expect(await page.getByRole('alert').innerText()).toBe('');
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

    it('built, behind nginx: the same, from a client-side route', async (context) => {
      if (guide.unavailable) return context.skip(guide.unavailable);
      await guide.run();
      await signInAndOut(guide.origin(8080), '/dashboard');
    }, 60_000);

    let own: Page;
    let site = '';

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
      await signIn(grace.newEmail, grace.reset);
      await own.context().close();
    });
  },
);
