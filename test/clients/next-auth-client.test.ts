import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, hasChromium, launchChromium } from '../helpers/chromium.js';
import { nginxPath, startNginx, type Nginx } from '../helpers/nginx.js';
import { buildNextAuthPage } from '../helpers/next-auth-page.js';
import { buildNextApp, nextMissing, startNextApp, type BuiltNextApp } from '../helpers/next-app.js';
import { canRun, freePort, type ServerProcess } from '../helpers/processes.js';
import { addUser, startServer, testSecret, type TestServer } from '../helpers/server.js';
import { selfSignedCertificate, type Certificate } from '../helpers/tls.js';

// The real clients, unchanged: a page bundling next-auth/react (5.0 beta) served by nginx on the
// same origin as Gatehouse, driven in Chromium, over http and https; and a Next.js server whose
// stock `auth()` reads the cookie Gatehouse set in that browser. About 40 s per run on two busy
// cores, plus about 30 s for the first `next build` (cached in examples/nextjs/node_modules/.cache
// afterwards). next, next-auth and React come from the example app's install (examples/nextjs/).

const password = 'correct horse battery staple';
const emailMaxFailures = 3;
const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const artifacts = path.resolve(import.meta.dirname, '../../test-artifacts/e2e-next-auth');
const mode = process.env.GATEHOUSE_TEST_FAST_PATHS === 'off' ? 'fast-paths-off' : 'fast-paths-on';

const missing = [
  hasChromium ? '' : `chromium (${chromiumPath})`,
  fs.existsSync(nginxPath) ? '' : `nginx (${nginxPath})`,
].filter(Boolean);
const noOpenssl = canRun('openssl', ['version']) ? '' : 'openssl not installed';
const noNext = nextMissing();
/** A describe title that carries its skip reason, so the report says why. */
const titled = (title: string, reason: string) =>
  reason ? `${title} (skipped: ${reason})` : title;

type Scheme = 'http' | 'https';
const cookieNames = {
  http: { session: 'authjs.session-token', csrf: 'authjs.csrf-token' },
  https: { session: '__Secure-authjs.session-token', csrf: '__Host-authjs.csrf-token' },
} as const;

interface SignInResult {
  error?: string;
  code?: string;
  status?: number;
  ok?: boolean;
  url?: string | null;
}

/** The page's JSON for one element. */
async function shown(page: Page, id: string): Promise<unknown> {
  return JSON.parse(await page.locator(`#${id}`).innerText()) as unknown;
}

/** Clicks, then waits for the action's next finished run (`data-runs` + 1) and returns its result. */
async function act(page: Page, id: string, click: () => Promise<void>): Promise<unknown> {
  const runs = Number(await page.locator(`#${id}`).getAttribute('data-runs'));
  await click();
  await page.locator(`#${id}[data-runs="${runs + 1}"]`).waitFor();
  return shown(page, id);
}

function waitForStatus(page: Page, status: 'unauthenticated' | 'authenticated') {
  return page.locator(`#status.${status}`).waitFor({ timeout: 10_000 });
}

async function signIn(page: Page, email: string, secret: string): Promise<SignInResult> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(secret);
  return (await act(page, 'signin-result', () =>
    page.getByRole('button', { name: 'Sign in', exact: true }).click(),
  )) as SignInResult;
}

function signOut(page: Page): Promise<unknown> {
  return act(page, 'signout-result', () => page.getByRole('button', { name: 'Sign out' }).click());
}

async function screenshot(page: Page, scheme: Scheme, state: string): Promise<void> {
  await page.screenshot({
    path: path.join(artifacts, `${scheme}-${mode}-${state}.png`),
    fullPage: true,
  });
}

/** A plain GET outside the browser with one cookie; over https it trusts exactly `ca`. */
function getJson(url: string, cookie: string, ca?: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const options = { headers: { cookie }, ca };
    const done = (response: http.IncomingMessage) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch {
          reject(new Error(`${url}: ${response.statusCode} ${body}`));
        }
      });
    };
    const request = url.startsWith('https:')
      ? https.get(url, options, done)
      : http.get(url, options, done);
    request.on('error', reject);
  });
}

// next-auth/react, React and Next.js come from examples/nextjs/node_modules (`npm test` installs it).
describe.skipIf(missing.length > 0 || noNext !== '')(
  titled(
    'next-auth clients against Gatehouse',
    missing.length ? `${missing.join(' and ')} not installed` : noNext,
  ),
  () => {
    let browser: Browser;
    let www: string;
    let nextApp: BuiltNextApp | undefined;
    let nextServer: ServerProcess | undefined;
    /** Why the Next.js reader is not running though `next` is installed: its tests fail with it. */
    let nextFailure: unknown;
    let nextPort = 0;

    async function startNextReader(): Promise<void> {
      nextApp = await buildNextApp(path.join(fixtures, 'next-reader'));
      nextPort = await freePort();
      nextServer = await startNextApp(nextApp.dir, nextPort, {
        NODE_ENV: 'production',
        AUTH_SECRET: testSecret,
        AUTH_TRUST_HOST: 'true',
      });
    }

    beforeAll(async () => {
      fs.mkdirSync(artifacts, { recursive: true });
      www = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-next-auth-page-'));
      const started = Date.now();
      // Settled, not Promise.all: a failed launch must not leave a Next.js build or server
      // starting after afterAll has run.
      const [launched, bundled] = await Promise.allSettled([
        launchChromium(),
        buildNextAuthPage(www),
        noNext
          ? undefined
          : startNextReader().catch((error: unknown) => {
              nextFailure = error;
            }),
      ]);
      if (launched.status === 'fulfilled') browser = launched.value;
      else throw launched.reason;
      if (bundled.status === 'rejected') throw bundled.reason;
      console.info(
        `e2e-next-auth: set up in ${Date.now() - started} ms` +
          (nextApp ? ` (Next.js build ${nextApp.built ? 'made' : 'reused'})` : ''),
      );
    }, 240_000);

    afterAll(async () => {
      await browser?.close();
      await nextServer?.stop();
      if (www) fs.rmSync(www, { recursive: true, force: true });
    });

    describe.each(['http', 'https'] as const)('over %s', (scheme) => {
      const skipHttps = scheme === 'https' ? noOpenssl : '';
      let dir: string;
      let gatehouse: TestServer;
      let nginx: Nginx;
      let origin: string;
      let certificate: Certificate | undefined;
      let adaId: string;
      const contexts: BrowserContext[] = [];

      /** A fresh browser profile (its own cookie jar) with one tab open on the page. */
      async function openPage(): Promise<{ context: BrowserContext; page: Page }> {
        const context = await browser.newContext({
          ignoreHTTPSErrors: scheme === 'https',
          viewport: { width: 900, height: 900 },
        });
        contexts.push(context);
        return { context, page: await openTab(context) };
      }

      async function openTab(context: BrowserContext): Promise<Page> {
        const page = await context.newPage();
        await page.goto(`${origin}/`);
        return page;
      }

      async function signedIn(): Promise<{ context: BrowserContext; page: Page }> {
        const opened = await openPage();
        await waitForStatus(opened.page, 'unauthenticated');
        expect(await signIn(opened.page, 'ada@example.com', password)).toMatchObject({ ok: true });
        await waitForStatus(opened.page, 'authenticated');
        return opened;
      }

      async function sessionCookie(context: BrowserContext): Promise<string> {
        const name = cookieNames[scheme].session;
        const cookie = (await context.cookies(origin)).find((c) => c.name === name);
        if (cookie === undefined) throw new Error(`no ${name} cookie`);
        return `${cookie.name}=${cookie.value}`;
      }

      beforeAll(async () => {
        if (skipHttps) return;
        dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-next-auth-${scheme}-`));
        certificate = scheme === 'https' ? selfSignedCertificate(dir) : undefined;
        const port = await freePort();
        origin = `${scheme}://127.0.0.1:${port}`;
        gatehouse = await startServer({
          config: { authUrl: origin, trustProxy: ['127.0.0.1'], requireVerifiedEmail: true },
          throttle: { emailMaxFailures },
        });
        adaId = await addUser(gatehouse, 'ada@example.com', password, 'Ada Lovelace');
        await addUser(gatehouse, 'grace@example.com', password, 'Grace Hopper');
        // REQUIRE_VERIFIED_EMAIL is on: these two proved their address, the third did not.
        await gatehouse.db
          .updateTable('users')
          .set({ email_verified_at: Date.now() })
          .where('email', 'in', ['ada@example.com', 'grace@example.com'])
          .execute();
        await addUser(gatehouse, 'unverified@example.com', password, 'Una Verified');
        const proxies: Record<string, string> = { '/api/auth/': gatehouse.url };
        if (nextServer !== undefined) proxies['/whoami'] = `http://127.0.0.1:${nextPort}`;
        nginx = await startNginx(dir, port, { scheme, root: www, proxies, tls: certificate });
      }, 60_000);

      afterAll(async () => {
        for (const context of contexts) await context.close();
        await nginx?.close();
        await gatehouse?.close();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
      });

      describe.skipIf(skipHttps !== '')(titled('the next-auth/react page', skipHttps), () => {
        it('getProviders lists the credentials and passkey providers and getCsrfToken returns a token', async () => {
          const { context, page } = await openPage();
          await page.locator('#providers[data-runs="1"]').waitFor();
          await page.locator('#csrf[data-runs="1"]').waitFor();
          const providers = (await shown(page, 'providers')) as Record<string, unknown>;
          expect(Object.keys(providers)).toEqual(['credentials', 'passkey']);
          expect(providers.passkey).toMatchObject({ id: 'passkey', type: 'webauthn' });
          expect(providers.credentials).toMatchObject({
            id: 'credentials',
            type: 'credentials',
            signinUrl: `${origin}/api/auth/signin/credentials`,
            callbackUrl: `${origin}/api/auth/callback/credentials`,
          });
          expect(await shown(page, 'csrf')).toMatch(/^[0-9a-f]{64}$/);
          const csrf = (await context.cookies(origin)).find(
            (c) => c.name === cookieNames[scheme].csrf,
          );
          expect(csrf).toMatchObject({
            path: '/',
            secure: scheme === 'https',
            httpOnly: true,
            sameSite: 'Lax',
          });
          await waitForStatus(page, 'unauthenticated');
          await screenshot(page, scheme, '1-loaded');
        });

        it("signs in: useSession goes loading → unauthenticated → authenticated with the user's id, email and name", async () => {
          const { context, page } = await openPage();
          await waitForStatus(page, 'unauthenticated');
          expect(await shown(page, 'session')).toBeNull();
          const result = await signIn(page, 'ada@example.com', password);
          expect(result).toEqual({ status: 200, ok: true, url: `${origin}/` });
          await waitForStatus(page, 'authenticated');
          await expect(page.locator('#history').innerText()).resolves.toBe(
            'loading → unauthenticated → authenticated',
          );
          const session = (await shown(page, 'session')) as { user: unknown; expires: string };
          expect(session.user).toEqual({
            id: adaId,
            email: 'ada@example.com',
            name: 'Ada Lovelace',
          });
          expect(Date.parse(session.expires)).toBeGreaterThan(Date.now() + 29 * 86400_000);
          const cookies = await context.cookies(origin);
          const byName = new Map(cookies.map((c) => [c.name, c]));
          const attributes = {
            path: '/',
            domain: '127.0.0.1', // host-only: no Domain attribute was set
            secure: scheme === 'https',
            httpOnly: true,
            sameSite: 'Lax',
          };
          expect(byName.get(cookieNames[scheme].session)).toMatchObject(attributes);
          expect(byName.get(cookieNames[scheme].csrf)).toMatchObject(attributes);
          // Gatehouse's own device cookie (it lets its owner past a per-email lock); the browser
          // accepts its __Host- name over https.
          const device = scheme === 'https' ? '__Host-gatehouse.device' : 'gatehouse.device';
          expect(byName.get(device)).toMatchObject(attributes);
          // No cookie under another scheme's or prefix's name.
          for (const name of byName.keys()) {
            if (name === device) continue;
            expect(name).toMatch(
              scheme === 'https' ? /^__(Secure|Host)-authjs\./ : /^authjs\.(?!.*__)/,
            );
          }
          await screenshot(page, scheme, '2-signed-in');
        });

        it("a wrong password: signIn resolves error 'CredentialsSignin', code 'credentials', and no session", async () => {
          const { context, page } = await openPage();
          await waitForStatus(page, 'unauthenticated');
          const result = await signIn(page, 'ada@example.com', 'not the password at all');
          // Auth.js answers a refused sign-in with 200 {url: …?error=…} (only a throttled one is
          // 429), so next-auth reports ok: true here: clients must look at `error`.
          expect(result).toEqual({
            error: 'CredentialsSignin',
            code: 'credentials',
            status: 200,
            ok: true,
            url: null,
          });
          await expect(page.locator('#status').innerText()).resolves.toBe('unauthenticated');
          const names = (await context.cookies(origin)).map((c) => c.name);
          expect(names).not.toContain(cookieNames[scheme].session);
          await screenshot(page, scheme, '3-wrong-password');
        });

        it(`a throttled email: after ${emailMaxFailures} failures even the right password gets code 'rate_limited'`, async () => {
          const { page } = await openPage();
          await waitForStatus(page, 'unauthenticated');
          for (let i = 0; i < emailMaxFailures; i += 1) {
            const result = await signIn(page, 'grace@example.com', `wrong password ${i} ${i} ${i}`);
            expect(result).toMatchObject({ error: 'CredentialsSignin', code: 'credentials' });
          }
          const result = await signIn(page, 'grace@example.com', password);
          expect(result).toEqual({
            error: 'CredentialsSignin',
            code: 'rate_limited',
            status: 429,
            ok: false,
            url: null,
          });
          await expect(page.locator('#status').innerText()).resolves.toBe('unauthenticated');
          await screenshot(page, scheme, '4-throttled');
        });

        it("REQUIRE_VERIFIED_EMAIL: the right password of an unverified address resolves code 'email_unverified', and no session", async () => {
          const { context, page } = await openPage();
          await waitForStatus(page, 'unauthenticated');
          const result = await signIn(page, 'unverified@example.com', password);
          expect(result).toEqual({
            error: 'CredentialsSignin',
            code: 'email_unverified',
            status: 200,
            ok: true,
            url: null,
          });
          await expect(page.locator('#status').innerText()).resolves.toBe('unauthenticated');
          const names = (await context.cookies(origin)).map((c) => c.name);
          expect(names).not.toContain(cookieNames[scheme].session);
        });

        it("update({ name: 'Mallory' }) cannot change the name: the session keeps the stored one", async () => {
          const { page } = await signedIn();
          const updated = await act(page, 'update-result', () =>
            page.getByRole('button', { name: 'Update name to Mallory' }).click(),
          );
          expect(updated).toMatchObject({ user: { id: adaId, name: 'Ada Lovelace' } });
          expect(await shown(page, 'session')).toMatchObject({ user: { name: 'Ada Lovelace' } });
          await screenshot(page, scheme, '5-after-update');
          await page.reload();
          await waitForStatus(page, 'authenticated');
          expect(await shown(page, 'session')).toMatchObject({ user: { name: 'Ada Lovelace' } });
        });

        it('signOut({ redirect: false }) ends the session: a cookie copied before reads as null', async () => {
          const { context, page } = await signedIn();
          const copied = await sessionCookie(context);
          const sessionUrl = `${origin}/api/auth/session`;
          const ca = certificate?.certPem;
          await expect(getJson(sessionUrl, copied, ca)).resolves.toMatchObject({
            user: { id: adaId },
          });
          await expect(signOut(page)).resolves.toEqual({ url: `${origin}/` });
          await waitForStatus(page, 'unauthenticated');
          const names = (await context.cookies(origin)).map((c) => c.name);
          expect(names).not.toContain(cookieNames[scheme].session);
          await expect(getJson(sessionUrl, copied, ca)).resolves.toBeNull();
          await screenshot(page, scheme, '6-signed-out');
        });

        it("two tabs: signing out in one turns the other's useSession unauthenticated, without a reload", async () => {
          const { context, page: first } = await signedIn();
          const second = await openTab(context);
          await waitForStatus(second, 'authenticated');
          // next-auth/react posts {event: 'session'} on a BroadcastChannel named 'next-auth' after
          // signOut; every other tab's SessionProvider refetches the session when it hears it.
          // (Headless tabs never change visibility, so refetch-on-focus plays no part here.)
          await signOut(first);
          await waitForStatus(second, 'unauthenticated');
          await expect(second.locator('#history').innerText()).resolves.toBe(
            'loading → authenticated → unauthenticated',
          );
          expect(await shown(second, 'session')).toBeNull();
          await screenshot(second, scheme, '7-other-tab-after-sign-out');
        });
      });

      describe.skipIf(skipHttps !== '')(
        titled('a Next.js server with an unchanged auth()', skipHttps),
        () => {
          beforeAll(() => {
            if (nextFailure !== undefined) throw nextFailure;
          });

          it('reads the session Gatehouse set in the browser, and null after sign-out', async () => {
            const { context, page } = await signedIn();
            const whoami = await context.newPage();
            const read = async () => {
              const response = await whoami.goto(`${origin}/whoami`);
              expect(response?.status()).toBe(200);
              return (await response?.json()) as unknown;
            };
            const session = (await read()) as { user: unknown; expires: string };
            // next-auth's default session callback exposes name, email and image (none here).
            expect(session.user).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
            expect(Date.parse(session.expires)).toBeGreaterThan(Date.now());
            await signOut(page);
            await waitForStatus(page, 'unauthenticated');
            await expect(read()).resolves.toBeNull();
          });

          it('cannot see revocation on its own: a cookie copied before sign-out still reads there', async () => {
            // A stateless reader only decrypts the token; Gatehouse's revocation lives in its
            // store. Apps that must honour sign-out everywhere ask Gatehouse's /api/auth/session.
            const { context, page } = await signedIn();
            const copied = await sessionCookie(context);
            await signOut(page);
            const ca = certificate?.certPem;
            await expect(getJson(`${origin}/api/auth/session`, copied, ca)).resolves.toBeNull();
            await expect(getJson(`${origin}/whoami`, copied, ca)).resolves.toMatchObject({
              user: { email: 'ada@example.com' },
            });
          });
        },
      );
    });
  },
);
