import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailService, type MailService } from '../account/account-service.js';
import { chromiumPath, hasChromium, launchChromium } from '../helpers/chromium.js';
import { scanEveryLink } from '../helpers/mail-reading.js';
import { nginxPath, startNginx, type Nginx } from '../helpers/nginx.js';
import { buildNextAuthPage } from '../helpers/next-auth-page.js';
import { nextMissing } from '../helpers/next-app.js';
import { freePort } from '../helpers/processes.js';

// Issue 40: sign-in by e-mail with the real next-auth/react (5.0 beta, from the example app's
// install), unchanged, in Chromium: a page bundling it served by nginx on the same origin as
// Gatehouse (EMAIL_SIGNIN=on, mail to a loopback SMTP server). `signIn("email")` and the
// `nodemailer` id get Auth.js's answer; the code typed in a browser that did not ask is refused,
// in the one that did it signs in; the link opened after a scanner's GETs signs in with its
// button. Screenshots in test-artifacts/e2e-next-auth-email/.

const artifacts = path.resolve(import.meta.dirname, '../../test-artifacts/e2e-next-auth-email');
const missing = [
  hasChromium ? '' : `chromium (${chromiumPath})`,
  fs.existsSync(nginxPath) ? '' : `nginx (${nginxPath})`,
  nextMissing(),
].filter(Boolean);

/** The page's JSON for one element, once its action has run `runs` times. */
async function result(page: Page, id: string, runs: number): Promise<unknown> {
  await page.locator(`#${id}[data-runs="${runs}"]`).waitFor();
  return JSON.parse(await page.locator(`#${id}`).innerText()) as unknown;
}

const waitForStatus = (page: Page, status: 'unauthenticated' | 'authenticated') =>
  page.locator(`#status.${status}`).waitFor({ timeout: 10_000 });

describe.skipIf(missing.length > 0)(
  `next-auth/react's signIn("email") against Gatehouse${missing.length ? ` (skipped: ${missing.join(', ')} missing)` : ''}`,
  () => {
    let browser: Browser;
    let mailed: MailService;
    let nginx: Nginx;
    let dir: string;
    let origin: string;

    beforeAll(async () => {
      fs.mkdirSync(artifacts, { recursive: true });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-next-auth-email-'));
      const www = path.join(dir, 'www');
      fs.mkdirSync(www);
      const port = await freePort();
      origin = `http://127.0.0.1:${port}`;
      [browser, mailed] = await Promise.all([
        launchChromium(),
        startMailService({
          users: ['ada@example.com', 'grace@example.com'],
          env: { EMAIL_SIGNIN: 'on', AUTH_URL: origin, TRUST_PROXY: '127.0.0.1' },
        }),
        buildNextAuthPage(www),
      ]);
      nginx = await startNginx(dir, port, {
        scheme: 'http',
        root: www,
        proxies: { '/api/auth/': mailed.service.url },
      });
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await nginx?.close();
      await mailed?.close();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    async function openApp() {
      const context = await browser.newContext({ viewport: { width: 900, height: 1000 } });
      const page = await context.newPage();
      await page.goto(`${origin}/`);
      await waitForStatus(page, 'unauthenticated');
      return { context, page };
    }

    /** The code and the whole link of the first mail to `to` after the first `since`. */
    async function mailTo(to: string, since: number) {
      const mail = await mailed.smtp.mailTo(to, since, /Sign in to/);
      const text = mail.parsed.text ?? '';
      return {
        code: /enter this code on the page: ([A-Z0-9]+)/.exec(text)?.[1] ?? '',
        link: /https?:\/\/\S+\/api\/auth\/callback\/email\?\S+/.exec(text)?.[0] ?? '',
      };
    }

    it("getProviders lists email and nodemailer, and signIn('email' | 'nodemailer', { redirect: false }) resolves Auth.js's verify-request URL", async () => {
      const { context, page } = await openApp();
      await page.locator('#providers[data-runs="1"]').waitFor();
      const providers = JSON.parse(await page.locator('#providers').innerText()) as Record<
        string,
        { type: string }
      >;
      expect(providers.email?.type).toBe('email');
      expect(providers.nodemailer?.type).toBe('email');
      await page.getByLabel('Address for a sign-in link').fill('grace@example.com');
      const verifyRequest = `${origin}/api/auth/verify-request?provider=email&type=email`;
      await page.getByRole('button', { name: 'Email me a link', exact: true }).click();
      expect(await result(page, 'email-result', 1)).toEqual({
        status: 200,
        ok: true,
        url: verifyRequest,
      });
      await page.getByRole('button', { name: 'Email me a link (nodemailer)' }).click();
      expect(await result(page, 'email-result', 2)).toEqual({
        status: 200,
        ok: true,
        url: verifyRequest.replace('provider=email', 'provider=nodemailer'),
      });
      await page.getByLabel('Address for a sign-in link').fill('not an address');
      await page.getByRole('button', { name: 'Email me a link', exact: true }).click();
      expect(await result(page, 'email-result', 3)).toEqual({
        error: 'EmailSignInError',
        code: 'email_invalid',
        status: 200,
        ok: true,
        url: null,
      });
      await page.screenshot({ path: path.join(artifacts, '1-redirect-false.png'), fullPage: true });
      await context.close();
    });

    it('signIn("email") goes on to "check your inbox"; the code typed in a browser that did not ask is refused, in the one that did it signs in', async () => {
      const { context, page } = await openApp();
      await page.getByLabel('Address for a sign-in link').fill('ada@example.com');
      const since = mailed.smtp.received.length;
      await page.getByRole('button', { name: 'Email me a link and go on' }).click();
      await page.waitForURL(`${origin}/api/auth/verify-request?provider=email&type=email`);
      expect(await page.getByRole('heading').textContent()).toBe('Check your inbox');
      await page.screenshot({ path: path.join(artifacts, '2-check-inbox.png'), fullPage: true });
      const { code } = await mailTo('ada@example.com', since);

      // Another browser (someone the code was read out to): refused, and no session there.
      const other = await browser.newContext();
      const elsewhere = await other.newPage();
      await elsewhere.goto(`${origin}/api/auth/verify-request?provider=email&type=email`);
      await elsewhere.getByLabel('Email the code was sent to').fill('ada@example.com');
      await elsewhere.getByLabel('Code from the mail').fill(code);
      await elsewhere.getByRole('button', { name: 'Sign in with the code' }).click();
      await elsewhere.waitForURL(/error=CredentialsSignin&code=email_code_invalid/);
      await elsewhere.screenshot({ path: path.join(artifacts, '3-elsewhere-refused.png') });
      expect((await other.cookies(origin)).some((c) => c.name === 'authjs.session-token')).toBe(
        false,
      );
      await other.close();

      await page.getByLabel('Code from the mail').fill(code);
      await page.getByRole('button', { name: 'Sign in with the code' }).click();
      await page.waitForURL(`${origin}/`);
      await waitForStatus(page, 'authenticated');
      expect(JSON.parse(await page.locator('#session').innerText())).toMatchObject({
        user: { email: 'ada@example.com' },
      });
      await page.screenshot({
        path: path.join(artifacts, '4-signed-in-by-code.png'),
        fullPage: true,
      });
      await context.close();
    });

    it("the link, opened after a scanner's GETs in a browser that did not ask, shows a button that signs that browser in", async () => {
      const asking = await openApp();
      await asking.page.getByLabel('Address for a sign-in link').fill('grace@example.com');
      const since = mailed.smtp.received.length;
      const runs = Number(await asking.page.locator('#email-result').getAttribute('data-runs'));
      await asking.page.getByRole('button', { name: 'Email me a link', exact: true }).click();
      await result(asking.page, 'email-result', runs + 1);
      const { link } = await mailTo('grace@example.com', since);
      // Defender's safe links: every link of every mail, twice, before anyone reads them.
      await scanEveryLink(mailed.smtp);
      await scanEveryLink(mailed.smtp);
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const reader = await phone.newPage();
      await reader.goto(link);
      expect(await reader.getByRole('heading').textContent()).toBe('Sign in to Gatehouse');
      await reader.screenshot({ path: path.join(artifacts, '5-link-page.png'), fullPage: true });
      await reader.getByRole('button', { name: 'Sign in' }).click();
      await reader.waitForURL(`${origin}/`);
      await waitForStatus(reader, 'authenticated');
      expect(JSON.parse(await reader.locator('#session').innerText())).toMatchObject({
        user: { email: 'grace@example.com' },
      });
      await reader.screenshot({ path: path.join(artifacts, '6-signed-in-by-link.png') });
      await phone.close();
      await asking.context.close();
    });
  },
);
