import { spawnSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Secret, TOTP } from 'otpauth';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  confirmAddressFromLink,
  confirmSignUp,
  grace,
  inbox,
  pagesPath,
  resetFromLink,
  said,
} from '../helpers/account-journey.js';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import {
  network,
  offline,
  serve as serveUntilListening,
  shell,
  stopGroup,
  type Running,
} from '../helpers/guide-steps.js';
import { guideBlocks, type RunBlock } from '../helpers/guide.js';
import { freePort } from '../helpers/processes.js';
import { LoopbackSmtp } from '../helpers/smtp.js';
import { startIdentityProvider, type IdentityProvider } from '../helpers/oidc-idp.js';
import { firstPass } from '../helpers/passes.js';
import { startTokenBackend, type TokenBackend } from '../helpers/token-backend.js';

// docs/integrate.md, followed as written. Its file blocks must be examples/nextjs's files byte
// for byte; then the test lays out gatehouse/ (this checkout, built) and my-app/ (the example)
// side by side, runs every `<!-- run: … -->` command of the guide in order, signs in as Ada in
// Chromium, checks the app's own table of users that Gatehouse's webhooks keep and the route that
// calls another backend (one the test runs) with the session's token, and takes Grace
// through the account self-service steps with her mail read from a catcher. The guide's last
// section says what the test changes (ports, mail, and skipping work an earlier run or the suite
// has done). About 15 s with a cached build (under 1 s of steps, 14 s in the browser, 6 s of it
// Grace's); `next build` adds 7 s on an idle machine, more on two busy cores, once per change of
// the example (the fast-paths-off run reuses it), and npm install about 10 s when
// examples/nextjs/node_modules is missing.

const root = path.resolve(import.meta.dirname, '../..');
const exampleDir = path.join(root, 'examples/nextjs');
const guide = fs.readFileSync(path.join(root, 'docs/integrate.md'), 'utf8');
const chromiumPath = '/usr/bin/chromium';
const artifacts = path.join(root, 'test-artifacts/integrate-guide');
const mode = process.env.GATEHOUSE_TEST_FAST_PATHS === 'off' ? 'fast-paths-off' : 'fast-paths-on';
const password = 'correct horse battery staple';
const ada = 'Signed in as Ada Lovelace';
/** Made by the example's own commands, never part of it. */
const generated = /^(node_modules|\.next|data)\/|^next-env\.d\.ts$|^\.env.*\.local$|\.tsbuildinfo$/;

/** The example's files, relative to its folder, sorted. */
function exampleFiles(): string[] {
  return fs
    .readdirSync(exampleDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(exampleDir, path.join(entry.parentPath, entry.name)))
    .filter((file) => !generated.test(file))
    .sort();
}

describe('docs/integrate.md shows examples/nextjs', () => {
  const blocks = guideBlocks(guide);

  it('every file block is its file, byte for byte (node scripts/build/sync-guide.ts rewrites them)', () => {
    const files = blocks.filter((b) => b.kind === 'file');
    expect(files.length).toBeGreaterThan(0);
    for (const block of files) {
      const file = path.join(root, block.path);
      expect(fs.existsSync(file), `${block.path} is shown but does not exist`).toBe(true);
      expect(block.body, `${block.path} differs from its block in docs/integrate.md`).toBe(
        fs.readFileSync(file, 'utf8'),
      );
    }
  });

  it('shows every file of the example whole, but its README and lockfile', () => {
    const shown = blocks.flatMap((b) => (b.kind === 'file' ? [b.path] : []));
    const expected = exampleFiles()
      .filter((file) => file !== 'README.md' && file !== 'package-lock.json')
      .map((file) => `examples/nextjs/${file}`);
    expect([...shown].sort()).toEqual(expected);
  });

  it('marks the commands this test follows: webhook secret, Gatehouse, a user, install, secrets, build, start', () => {
    const runs = blocks.filter((b): b is RunBlock => b.kind === 'run');
    expect(runs.map((b) => `${b.folder} ${b.role}`)).toEqual([
      'gatehouse command',
      'gatehouse server',
      'gatehouse command',
      'my-app install',
      'my-app command',
      'my-app build',
      'my-app server',
    ]);
  });
});

/** `preferred` when it is free on 127.0.0.1, else any free port. */
function portOr(preferred: number): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(freePort()));
    server.listen(preferred, '127.0.0.1', () => server.close(() => resolve(preferred)));
  });
}

/**
 * Adds a passkey from the page's session, in the browser, with the raw WebAuthn API and the
 * wire format of next-auth/webauthn (its options route, then its callback with `action=register`).
 * Plain JavaScript in a string: Playwright sends it to the page as it is.
 */
const registerPasskey = `(async () => {
  const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const text = (buffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const { options } = await (await fetch('/api/auth/webauthn-options/passkey?action=register')).json();
  const credential = await navigator.credentials.create({
    publicKey: {
      ...options,
      challenge: bytes(options.challenge),
      user: { ...options.user, id: bytes(options.user.id) },
      excludeCredentials: (options.excludeCredentials ?? []).map((c) => ({ ...c, id: bytes(c.id) })),
    },
  });
  const response = credential.response;
  const data = {
    id: credential.id,
    rawId: text(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: text(response.clientDataJSON),
      attestationObject: text(response.attestationObject),
      transports: response.getTransports(),
    },
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: credential.authenticatorAttachment,
  };
  const { csrfToken } = await (await fetch('/api/auth/csrf')).json();
  const answer = await fetch('/api/auth/callback/passkey', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-auth-return-redirect': '1' },
    body: new URLSearchParams({ action: 'register', data: JSON.stringify(data), csrfToken, callbackUrl: location.href }),
  });
  return { status: answer.status, url: (await answer.json()).url };
})()`;

// Once, with the fast paths on: the stock next-auth client's wire protocol is checked in both
// modes by next-auth-client.test.ts; this walk through the guide is the app's, not the wire's.
describe.skipIf(!fs.existsSync(chromiumPath) || !firstPass)(
  fs.existsSync(chromiumPath)
    ? 'following docs/integrate.md to a signed-in Next.js app'
    : `following docs/integrate.md (skipped: chromium (${chromiumPath}) not installed)`,
  () => {
    const servers: Running[] = [];
    let browser: Browser | undefined;
    /** Why the guide could not be followed here for a reason outside it (offline install). */
    let unavailable = '';
    let gatehousePort = 0;
    let appPort = 0;
    let appUrl = '';
    let gatehouseDir = '';
    let appDir = '';
    let gatehouseEnv: NodeJS.ProcessEnv = {};
    /** The guide's command that starts Gatehouse, with this run's ports. */
    let gatehouseCommand = '';
    /** The mail catcher Gatehouse mails to (the guide's Mailpit). */
    let smtp: LoopbackSmtp | undefined;
    /** The OpenID Connect provider the guide's last section configures (a real one). */
    let idp: IdentityProvider | undefined;
    /** The app's other backend (`API_URL`), which takes the session's token. */
    let backend: TokenBackend | undefined;
    const timings: Record<string, number> = {};

    /** A guide's server command, left running once it listens on `port`. */
    async function serve(command: string, cwd: string, env: NodeJS.ProcessEnv, port: number) {
      const server = await serveUntilListening(command, cwd, env, port);
      servers.push(server);
      return server;
    }
    beforeAll(async () => {
      fs.mkdirSync(artifacts, { recursive: true });
      // Gatehouse's port is written into the app's build (the rewrite), so a fixed one lets the
      // second run reuse the first one's build; any free one when it is taken.
      gatehousePort = await portOr(Number(process.env.GUIDE_GATEHOUSE_PORT ?? 39_300));
      appPort = process.env.GUIDE_APP_PORT ? Number(process.env.GUIDE_APP_PORT) : await freePort();
      appUrl = `http://localhost:${appPort}`;

      const files = exampleFiles();
      const key = createHash('sha256');
      key.update(`gatehouse port ${gatehousePort}\n`);
      for (const file of files)
        key.update(`${file}\n`).update(fs.readFileSync(path.join(exampleDir, file)));
      const family = path.join(os.tmpdir(), 'gatehouse-integrate-guide');
      const work = path.join(family, key.digest('hex').slice(0, 16));
      fs.mkdirSync(family, { recursive: true });
      for (const old of fs.readdirSync(family))
        if (path.join(family, old) !== work)
          fs.rmSync(path.join(family, old), { recursive: true, force: true });

      // gatehouse/: this checkout (built by the suite), with a data folder of its own.
      gatehouseDir = path.join(work, 'gatehouse');
      fs.rmSync(gatehouseDir, { recursive: true, force: true });
      fs.mkdirSync(gatehouseDir, { recursive: true });
      for (const entry of fs.readdirSync(root))
        if (entry !== 'data' && entry !== '.git')
          fs.symlinkSync(path.join(root, entry), path.join(gatehouseDir, entry));

      // my-app/: the example's files, as the guide's file blocks make them (checked above).
      appDir = path.join(work, 'my-app');
      const built = path.join(appDir, '.guide-build-complete');
      if (!fs.existsSync(built)) {
        fs.rmSync(appDir, { recursive: true, force: true });
        for (const file of files)
          fs.cpSync(path.join(exampleDir, file), path.join(appDir, file), { recursive: true });
      }
      const withPorts = (text: string) =>
        text.replace(/\b3000\b/g, String(gatehousePort)).replace(/\b3001\b/g, String(appPort));
      fs.writeFileSync(
        path.join(appDir, 'package.json'),
        withPorts(fs.readFileSync(path.join(exampleDir, 'package.json'), 'utf8')),
      );

      const base = {
        PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? os.homedir(),
        NEXT_TELEMETRY_DISABLED: '1',
        npm_config_update_notifier: 'false',
      };
      smtp = await LoopbackSmtp.start();
      backend = await startTokenBackend(
        `http://127.0.0.1:${gatehousePort}/api/auth/jwks.json`,
        appUrl,
      );
      idp = await startIdentityProvider();
      idp.setClients([
        {
          clientId: 'my-app',
          clientSecret: 'my-app-client-secret-0123456789',
          redirectUris: [`${appUrl}/api/auth/callback/oidc`],
        },
      ]);
      gatehouseEnv = {
        ...base,
        PORT: String(gatehousePort),
        SMTP_URL: smtp.url,
        // The guide's "Sign in with Google, GitHub or any OpenID Connect provider", set here.
        AUTH_OIDC_ISSUER: idp.issuer,
        AUTH_OIDC_ID: 'my-app',
        AUTH_OIDC_SECRET: 'my-app-client-secret-0123456789',
        AUTH_OIDC_NAME: 'Acme SSO',
        // The guide's "Sign in by e-mail: a link and a code", set here.
        EMAIL_SIGNIN: 'on',
        MAIL_FROM: 'My app <no-reply@example.com>',
        FAST_PATHS: mode === 'fast-paths-off' ? 'off' : 'on',
        npm_config_ignore_scripts: 'true',
      };
      const envs: Record<string, NodeJS.ProcessEnv> = {
        gatehouse: gatehouseEnv,
        'my-app': {
          ...base,
          ...network(),
          GATEHOUSE_URL: `http://127.0.0.1:${gatehousePort}`,
          API_URL: backend.url,
        },
      };
      const dirs: Record<string, string> = { gatehouse: gatehouseDir, 'my-app': appDir };

      for (const block of guideBlocks(guide)) {
        if (block.kind !== 'run') continue;
        const started = Date.now();
        const label = `${block.folder}: ${block.body.trim()}`;
        const cwd = dirs[block.folder];
        const env = envs[block.folder];
        if (!cwd || !env) throw new Error(`the guide runs in an unknown folder: ${label}`);
        const command = withPorts(block.body);
        if (block.role === 'install' && fs.existsSync(path.join(appDir, 'node_modules'))) continue;
        if (block.role === 'install' && fs.existsSync(path.join(exampleDir, 'node_modules'))) {
          // The same lockfile's tree: hard links are instant; a copy where they cannot be made.
          // (A symbolic link will not do: Turbopack refuses node_modules outside the project.)
          // Its real folder: in a git worktree node_modules may be a link to another checkout's.
          const from = fs.realpathSync(path.join(exampleDir, 'node_modules'));
          const linked = spawnSync('cp', ['-al', from, path.join(appDir, 'node_modules')]);
          if (linked.status !== 0)
            fs.cpSync(from, path.join(appDir, 'node_modules'), { recursive: true });
          timings['install (linked)'] = Date.now() - started;
          continue;
        }
        if (block.role === 'build' && fs.existsSync(built)) continue;
        if (block.role === 'server') {
          if (block.folder === 'gatehouse') gatehouseCommand = command;
          await serve(command, cwd, env, block.folder === 'gatehouse' ? gatehousePort : appPort);
          timings[label] = Date.now() - started;
          continue;
        }
        const run = shell(command, cwd, env);
        await run.exited;
        if (run.child.exitCode !== 0) {
          if (block.role === 'install' && offline.test(run.output())) {
            unavailable = `the example's packages could not be installed (offline?): ${label}`;
            return;
          }
          throw new Error(`${label} exited ${run.child.exitCode}:\n${run.output()}`);
        }
        if (block.role === 'build') fs.writeFileSync(built, new Date().toISOString());
        timings[label] = Date.now() - started;
      }

      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
      console.log(`integrate guide (${mode}) steps, ms: ${JSON.stringify(timings)}`);
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      for (const server of servers.reverse()) await stopGroup(server);
      await smtp?.close();
      await idp?.close();
      await backend?.close();
    });

    const text = (page: Page, id: string) => page.locator(`#${id}`).innerText();
    const waitFor = (page: Page, id: string, hasText: string) =>
      page.locator(`#${id}`, { hasText }).waitFor({ timeout: 15_000 });
    const shot = (page: Page, name: string) =>
      page.screenshot({ path: path.join(artifacts, `${mode}-${name}.png`), fullPage: true });

    let page: Page;
    let copiedCookie = '';

    it('sends a signed-out visitor from the protected page to the home page', async (context) => {
      if (unavailable) return context.skip(unavailable);
      page = await browser!.newPage();
      await page.goto(`${appUrl}/dashboard`);
      expect(new URL(page.url()).pathname).toBe('/');
      await waitFor(page, 'client-session', 'Not signed in');
      expect(await text(page, 'server-decoded')).toBe('Not signed in');
      expect(await text(page, 'server-gatehouse')).toBe('Not signed in');
      // Shown by the browser where it has passkeys (Chromium has).
      await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
      await shot(page, '1-signed-out');
    });

    it('refuses a wrong password on the page, saying so', async (context) => {
      if (unavailable) return context.skip(unavailable);
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
    });

    it('signs in as Ada: both server readers and useSession say so, with the same id', async (context) => {
      if (unavailable) return context.skip(unavailable);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // router.refresh() renders the server components again, now with the cookie.
      await waitFor(page, 'server-gatehouse', ada);
      await waitFor(page, 'server-decoded', ada);
      await waitFor(page, 'client-session', ada);
      const said = await Promise.all(
        ['server-decoded', 'server-gatehouse', 'client-session'].map((id) => text(page, id)),
      );
      expect(said[0]).toMatch(/^Signed in as Ada Lovelace \(id [0-9a-f-]{8,}\)$/);
      expect(said[1]).toBe(said[0]);
      expect(said[2]).toBe(said[0]);
      await shot(page, '2-signed-in');
      const cookie = (await page.context().cookies()).find(
        (c) => c.name === 'authjs.session-token',
      );
      expect(cookie?.httpOnly).toBe(true);
      copiedCookie = `${cookie?.name}=${cookie?.value}`;
    });

    it('opens the protected page for Ada', async (context) => {
      if (unavailable) return context.skip(unavailable);
      await page.getByRole('link', { name: 'Dashboard' }).click();
      await waitFor(page, 'dashboard', 'Ada Lovelace, this page is yours');
      await shot(page, '3-dashboard');
      await page.getByRole('link', { name: 'Home' }).click();
      await waitFor(page, 'server-gatehouse', ada);
    });

    it("/api/whoami calls the app's other backend with the session's token, which the backend checks against Gatehouse's key set", async (context) => {
      if (unavailable) return context.skip(unavailable);
      const id = /\(id (\S+)\)$/.exec(await text(page, 'server-gatehouse'))?.[1];
      const answer = await page.evaluate(async () => {
        const response = await fetch('/api/whoami');
        return { status: response.status, body: (await response.json()) as unknown };
      });
      expect(answer).toEqual({
        status: 200,
        body: { id, email: 'ada@example.com', name: 'Ada Lovelace' },
      });
      expect(backend!.taken.at(-1)).toMatchObject({ sub: id, iss: appUrl, aud: appUrl });
    });

    /** The dashboard's line on the app's own table, once it says `hasText` (webhooks come later). */
    async function tableSays(hasText: string): Promise<void> {
      await expect
        .poll(
          async () => {
            await page.goto(`${appUrl}/dashboard`);
            return text(page, 'mirror');
          },
          { timeout: 15_000, interval: 250 },
        )
        .toContain(hasText);
    }

    it("keeps Ada in the app's own table from Gatehouse's webhooks: her row after her sign-in, her new name after a rename", async (context) => {
      if (unavailable) return context.skip(unavailable);
      // Added by a CLI without the webhook variables: her sign-in (session.created) brings her.
      await tableSays("In this app's own table: Ada Lovelace <ada@example.com>");
      await shot(page, '3-dashboard-own-table');
      const api = new Client(`http://127.0.0.1:${gatehousePort}`, { origin: appUrl });
      expect((await api.signIn('ada@example.com', password)).status).toBe(200);
      const rename = (name: string) => postWithCsrf(api, '/api/account/profile', { name });
      expect((await rename('Ada King')).status).toBe(200);
      await tableSays("In this app's own table: Ada King <ada@example.com>");
      // Her name back for the tests after this one (Gatehouse's answer; the table follows).
      expect((await rename('Ada Lovelace')).status).toBe(200);
      await page.getByRole('link', { name: 'Home' }).click();
      await waitFor(page, 'server-gatehouse', ada);
    });

    it("the webhook route answers 401 to a delivery not signed with Gatehouse's secret now, and applies one id once", async (context) => {
      if (unavailable) return context.skip(unavailable);
      const secret = fs.readFileSync(path.join(gatehouseDir, 'data/webhook-secret'), 'utf8').trim();
      const user = {
        id: randomUUID(),
        email: 'grace@example.com',
        name: 'Grace Hopper',
        emailVerified: true,
        disabled: false,
      };
      const event = (name: string) =>
        JSON.stringify({
          type: 'user.created',
          timestamp: new Date().toISOString(),
          data: { ...user, name },
        });
      const signed = (key: string, id: string, at: Date, body: string) => ({
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(key).sign(id, at, body),
      });
      const post = (body: string, headers: Record<string, string>) =>
        fetch(`${appUrl}/api/gatehouse-webhooks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
      const nameInTable = () => {
        const db = new DatabaseSync(path.join(appDir, 'data/app.sqlite'), { readOnly: true });
        try {
          const row = db.prepare('SELECT name FROM users WHERE id = ?').get(user.id);
          return row?.name;
        } finally {
          db.close();
        }
      };
      const id = `msg_${randomUUID().replaceAll('-', '')}`;
      const body = event('Grace Hopper');
      const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
      expect((await post(body, signed(otherSecret, id, new Date(), body))).status).toBe(401);
      const sixMinutesAgo = new Date(Date.now() - 6 * 60_000);
      expect((await post(body, signed(secret, id, sixMinutesAgo, body))).status).toBe(401);
      expect((await post(body, {})).status).toBe(401);
      expect((await post(event('Mallory'), signed(secret, id, new Date(), body))).status).toBe(401);
      expect(nameInTable()).toBeUndefined();

      expect((await post(body, signed(secret, id, new Date(), body))).status).toBe(204);
      expect(nameInTable()).toBe('Grace Hopper');
      // The same id again (a retry after a lost answer), even with another body: applied once.
      const again = event('Grace Brewster Hopper');
      expect((await post(again, signed(secret, id, new Date(), again))).status).toBe(204);
      expect(nameInTable()).toBe('Grace Hopper');
    });

    it('signs out; a cookie copied before reads as no session when asking Gatehouse, and as Ada when decoded locally', async (context) => {
      if (unavailable) return context.skip(unavailable);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await waitFor(page, 'server-gatehouse', 'Not signed in');
      await waitFor(page, 'server-decoded', 'Not signed in');
      await waitFor(page, 'client-session', 'Not signed in');
      await shot(page, '4-signed-out-again');

      const asked = await fetch(`${appUrl}/api/auth/session`, {
        headers: { cookie: copiedCookie },
      });
      expect(await asked.json()).toBeNull();

      // The server components read the copied cookie both ways in one render.
      const other = await browser!.newContext();
      const [name, ...value] = copiedCookie.split('=');
      await other.addCookies([{ name: name!, value: value.join('='), url: appUrl }]);
      const revoked = await other.newPage();
      await revoked.goto(appUrl);
      expect(await text(revoked, 'server-gatehouse')).toBe('Not signed in');
      expect(await text(revoked, 'server-decoded')).toMatch(/^Signed in as Ada Lovelace/);
      await shot(revoked, '5-copied-cookie-after-sign-out');
      await other.close();

      // proxy.ts decodes it too, and lets it through; the page asks Gatehouse and redirects.
      const dashboard = await fetch(`${appUrl}/dashboard`, {
        headers: { cookie: copiedCookie },
        redirect: 'manual',
      });
      expect(dashboard.status).toBe(307);
      expect(new URL(dashboard.headers.get('location') ?? '', appUrl).pathname).toBe('/');
    });

    it('after sign-out /api/whoami answers 401 without calling the backend: Gatehouse gives an ended session no token', async (context) => {
      if (unavailable) return context.skip(unavailable);
      const calls = backend!.calls;
      const answer = await fetch(`${appUrl}/api/whoami`, { headers: { cookie: copiedCookie } });
      expect(answer.status).toBe(401);
      expect(backend!.calls).toBe(calls);
    });

    /** The link to `path` in the first mail to `to` (with `subject`) since `since` mails. */
    const mailedLink = (to: string, subject: RegExp, path: string, since: number) =>
      inbox(smtp!, appUrl).link(to, subject, path, since);

    let own: Page;

    /**
     * The app's home page, once React has taken it over (useSession has answered): a click
     * before that would be lost, and a form would be submitted by the browser itself.
     */
    async function home(page: Page, session: string) {
      await page.goto(appUrl);
      await waitFor(page, 'client-session', session);
    }

    it("keeps the app's own /account; Gatehouse's pages and account API answer through the one rewrite", async (context) => {
      if (unavailable) return context.skip(unavailable);
      const signedOut = await fetch(`${appUrl}/account`, { redirect: 'manual' });
      expect(signedOut.status).toBe(307);
      expect(new URL(signedOut.headers.get('location') ?? '', appUrl).pathname).toBe('/');
      const gatehouseAccount = await fetch(`${appUrl}${pagesPath}`, { redirect: 'manual' });
      expect(gatehouseAccount.status).toBe(303);
      expect(gatehouseAccount.headers.get('location')).toBe(
        `${appUrl}/api/auth/signin?callbackUrl=${encodeURIComponent(pagesPath)}`,
      );
      expect((await fetch(`${appUrl}/api/account`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${gatehousePort}/account`)).status).toBe(404);
      // Gatehouse's sign-in page links to its pages there.
      const signIn = await (await fetch(`${appUrl}/api/auth/signin`)).text();
      expect(signIn).toContain(`href="${pagesPath}/password/forgot"`);
      expect(signIn).toContain(`href="${pagesPath}/signup"`);

      own = await (await browser!.newContext()).newPage();
      // A step that cannot happen fails naming what it waited for, inside the test's time.
      own.setDefaultTimeout(10_000);
      await home(own, 'Not signed in');
      await own.getByRole('link', { name: 'Forgot your password?' }).click();
      await own.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
      // The other way: Gatehouse's own page, on the app's origin.
      await own.getByRole('link', { name: "Gatehouse's page" }).click();
      await own.getByRole('heading', { name: 'Reset your password' }).waitFor();
      expect(new URL(own.url()).pathname).toBe(`${pagesPath}/password/forgot`);
      await shot(own, '5a-gatehouse-forgot-page');
    });

    it("signs Grace up with the app's form; the mailed link opens Gatehouse's page, which makes the account", async (context) => {
      if (unavailable) return context.skip(unavailable);
      await home(own, 'Not signed in');
      await own.getByRole('link', { name: 'Create an account' }).click();
      await own.getByRole('heading', { name: 'Create an account' }).waitFor();
      await own.getByLabel('Name').fill(grace.name);
      await own.getByLabel('Email').fill(grace.email);
      await own.getByLabel('Password').fill(grace.password);
      const since = smtp!.received.length;
      await own.getByRole('button', { name: 'Sign up' }).click();
      await said(own, 'Check your inbox');
      await shot(own, '5b-signed-up');
      await confirmSignUp(
        own,
        await mailedLink(grace.email, /Confirm your address/, `${pagesPath}/signup/confirm`, since),
        grace.password,
      );

      await home(own, 'Not signed in');
      await own.getByLabel('Email').fill(grace.email);
      await own.getByLabel('Password').fill(grace.password);
      await own.getByRole('button', { name: 'Sign in', exact: true }).click();
      await waitFor(own, 'server-gatehouse', 'Signed in as Grace Hopper');
    });

    it("changes Grace's password and address on the app's own /account; the new address is confirmed from the mail", async (context) => {
      if (unavailable) return context.skip(unavailable);
      await own.getByRole('link', { name: 'Your account' }).click();
      await waitFor(own, 'account-email', grace.email);
      await own.getByRole('button', { name: 'Confirm my address' }).click();
      await said(own, 'confirmed already');

      const password = own.locator('#change-password');
      await password.getByLabel('Current password').fill(grace.password);
      await password.getByLabel('New password', { exact: true }).fill(grace.changed);
      await password.getByLabel('New password again').fill(grace.changed);
      await password.getByRole('button', { name: 'Change password' }).click();
      await said(own, 'Password changed');

      const address = own.locator('#change-email');
      await address.getByLabel('New address').fill(grace.newEmail);
      await address.getByLabel('Password').fill(grace.changed);
      const since = smtp!.received.length;
      await address.getByRole('button', { name: 'Change address' }).click();
      await said(own, `mailed a link to ${grace.newEmail}`);
      await shot(own, '5c-own-account-page');
      await confirmAddressFromLink(
        own,
        await mailedLink(
          grace.newEmail,
          /Confirm your new address/,
          `${pagesPath}/email/verify`,
          since,
        ),
      );
      // Confirmed from this browser: its session goes on, with the new address.
      await own.goto(`${appUrl}/account`);
      await waitFor(own, 'account-email', grace.newEmail);
    });

    it("resets Grace's forgotten password: the app's form, the mailed link to Gatehouse's page, then sign-in with the new one", async (context) => {
      if (unavailable) return context.skip(unavailable);
      await home(own, 'Signed in as Grace Hopper');
      await own.getByRole('button', { name: 'Sign out' }).click();
      await waitFor(own, 'server-gatehouse', 'Not signed in');
      await own.getByRole('link', { name: 'Forgot your password?' }).click();
      // The home page's sign-in form has an Email field too: fill the new page's.
      await own.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
      await own.getByLabel('Email').fill(grace.newEmail);
      const since = smtp!.received.length;
      await own.getByRole('button', { name: 'Mail me a link' }).click();
      await said(own, 'If an account exists');
      await resetFromLink(
        own,
        await mailedLink(grace.newEmail, /Reset your/, `${pagesPath}/password/reset`, since),
        grace.reset,
      );
      await shot(own, '5d-reset-done');

      await home(own, 'Not signed in');
      await own.getByLabel('Email').fill(grace.newEmail);
      await own.getByLabel('Password').fill(grace.reset);
      await own.getByRole('button', { name: 'Sign in', exact: true }).click();
      await waitFor(own, 'server-gatehouse', 'Signed in as Grace Hopper');
      await own.context().close();
    });

    it('with two-step sign-in on, the form asks for the code, refuses a wrong one in words, and signs in with the right one without sending the password again', async (context) => {
      if (unavailable) return context.skip(unavailable);
      // Ada turns TOTP on through Gatehouse's API, from a session fresh enough for it.
      const api = new Client(`http://127.0.0.1:${gatehousePort}`, { origin: appUrl });
      expect((await api.signIn('ada@example.com', password)).status).toBe(200);
      const setup = await postWithCsrf(api, '/api/account/totp/setup', {});
      expect(setup.status).toBe(200);
      const totp = new TOTP({
        secret: Secret.fromBase32(((await setup.json()) as { secret: string }).secret),
      });
      const now = Date.now();
      const confirmed = await postWithCsrf(api, '/api/account/totp/confirm', {
        code: totp.generate({ timestamp: now }),
      });
      expect(confirmed.status).toBe(200);
      const { recoveryCodes } = (await confirmed.json()) as { recoveryCodes: string[] };
      // The confirming code's step is spent: sign in with the next step's (inside the window).
      const right = totp.generate({ timestamp: now + 30_000 });
      const window = new Set(
        [-1, 0, 1, 2].map((n) => totp.generate({ timestamp: now + n * 30_000 })),
      );
      let wrong = '000000';
      for (let n = 1; window.has(wrong); n += 1) wrong = String(n).padStart(6, '0');

      const posts: string[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/api/auth/callback/credentials')
          posts.push(request.postData() ?? '');
      });
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      const code = page.getByLabel('Code from your authenticator app');
      await code.fill(wrong);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
      await shot(page, '6-second-step-wrong-code');
      expect(await text(page, 'server-gatehouse')).toBe('Not signed in');
      await code.fill(right);
      await page.getByRole('button', { name: 'Verify' }).click();
      await waitFor(page, 'server-gatehouse', ada);
      await waitFor(page, 'client-session', ada);
      page.removeAllListeners('request');
      expect(posts).toHaveLength(3);
      expect(new URLSearchParams(posts[0]).get('password')).toBe(password);
      for (const [post, otp] of [
        [posts[1], wrong],
        [posts[2], right],
      ] as const) {
        const fields = new URLSearchParams(post);
        expect(fields.get('otp')).toBe(otp);
        expect(fields.has('password') || fields.has('email')).toBe(false);
      }

      // The app's own change of address proves the second factor too: without it, Gatehouse's
      // words on the form; with a recovery code (the app's codes of this step are spent), done.
      await page.getByRole('link', { name: 'Your account' }).click();
      const address = page.locator('#change-email');
      await address.getByLabel('New address').fill('ada.lovelace@example.com');
      await address.getByLabel('Password').fill(password);
      await address.getByRole('button', { name: 'Change address' }).click();
      await said(page, 'enter the code your authenticator app shows, or a recovery code');
      await address.getByLabel('Code from your authenticator app').fill(recoveryCodes[0]!);
      await address.getByRole('button', { name: 'Change address' }).click();
      await said(page, 'mailed a link to ada.lovelace@example.com');
      await shot(page, '6a-own-address-change-with-code');
      // Looked at on a phone, in the dark: the browser's own colours, nothing sticking out.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
      await shot(page, '6b-own-account-page-390-dark');
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 1280, height: 720 });
      await home(page, ada);
    });

    it("a passkey added from that fresh session signs Ada in with the example's button", async (context) => {
      if (unavailable) return context.skip(unavailable);
      // A platform authenticator that holds discoverable credentials and verifies its user.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('WebAuthn.enable', { enableUI: false });
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      // Registration as next-auth/webauthn's `signIn('passkey', { action: 'register' })` does it
      // (the example offers no such button: people add passkeys on Gatehouse's /account).
      const added = await page.evaluate<{ status: number; url: string }>(registerPasskey);
      expect(added).toMatchObject({ status: 200 });
      expect(added.url).not.toMatch(/error=/);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await waitFor(page, 'server-gatehouse', 'Not signed in');

      // With user verification the passkey stands for both factors: no code is asked.
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await waitFor(page, 'server-gatehouse', ada);
      await waitFor(page, 'client-session', ada);
      await shot(page, '7-signed-in-with-a-passkey');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await waitFor(page, 'server-gatehouse', 'Not signed in');
      await cdp.detach();
    });

    it("signs a new person in with an OpenID Connect provider through the example's button: signIn('oidc'), unchanged", async (context) => {
      if (unavailable) return context.skip(unavailable);
      idp!.login({
        sub: 'sam-at-acme',
        email: 'sam@example.com',
        emailVerified: true,
        name: 'Sam Provider',
      });
      const sso = await (await browser!.newContext()).newPage();
      sso.setDefaultTimeout(10_000);
      await home(sso, 'Not signed in');
      // To the provider (a real one on loopback), and back through the app's /api/auth rewrite.
      await sso.getByRole('button', { name: 'Continue with Acme SSO' }).click();
      await waitFor(sso, 'server-gatehouse', 'Signed in as Sam Provider');
      await waitFor(sso, 'server-decoded', 'Signed in as Sam Provider');
      await waitFor(sso, 'client-session', 'Signed in as Sam Provider');
      await shot(sso, '7b-signed-in-with-a-provider');
      await sso.getByRole('button', { name: 'Sign out' }).click();
      await waitFor(sso, 'server-gatehouse', 'Not signed in');
      await sso.context().close();
    });

    it("signs Sam (the provider's account) in with the example's e-mail form: Gatehouse's page takes the code from the mail; the link signs in a phone", async (context) => {
      if (unavailable) return context.skip(unavailable);
      // Ada has a second factor by now (it would be asked for after the mail, as after her
      // password): Sam, made by the provider above, has none, and no password either.
      const sam = 'Signed in as Sam Provider';
      const asking = await (await browser!.newContext()).newPage();
      asking.setDefaultTimeout(10_000);
      await home(asking, 'Not signed in');
      await asking.getByLabel('Or send a sign-in link to').fill('sam@example.com');
      let since = smtp!.received.length;
      await asking.getByRole('button', { name: 'Email me a sign-in link' }).click();
      await asking.waitForURL(`${appUrl}/api/auth/verify-request?provider=email&type=email`);
      const mail = await smtp!.mailTo('sam@example.com', since, /Sign in to/);
      const code = /enter this code on the page: ([A-Z0-9]+)/.exec(mail.parsed.text ?? '')?.[1];
      await shot(asking, '7c-check-your-inbox');
      await asking.getByLabel('Code from the mail').fill(code ?? '');
      await asking.getByRole('button', { name: 'Sign in with the code' }).click();
      await waitFor(asking, 'server-gatehouse', sam);
      await waitFor(asking, 'client-session', sam);
      await shot(asking, '7d-signed-in-by-mailed-code');
      await asking.context().close();

      // Asked again; the link, opened on another device, signs that one in with its button.
      const again = await (await browser!.newContext()).newPage();
      await home(again, 'Not signed in');
      await again.getByLabel('Or send a sign-in link to').fill('sam@example.com');
      since = smtp!.received.length;
      await again.getByRole('button', { name: 'Email me a sign-in link' }).click();
      const link = /https?:\/\/\S+\/api\/auth\/callback\/email\?\S+/.exec(
        (await smtp!.mailTo('sam@example.com', since, /Sign in to/)).parsed.text ?? '',
      )?.[0];
      const phone = await (await browser!.newContext()).newPage();
      await phone.goto(link ?? '');
      await phone.getByRole('button', { name: 'Sign in' }).click();
      await waitFor(phone, 'server-gatehouse', sam);
      await again.context().close();
      await phone.context().close();
    });

    it('with SECOND_FACTOR=required, Grace (no second factor yet) sets up her app on the form with the code from her mail, wrong codes refused in words, and is signed in', async (context) => {
      if (unavailable) return context.skip(unavailable);
      // Gatehouse again as section 1 starts it, now requiring a second factor (the same build).
      await stopGroup(servers[0]!);
      servers[0] = await serveUntilListening(
        gatehouseCommand,
        gatehouseDir,
        {
          ...gatehouseEnv,
          SECOND_FACTOR: 'required',
          FACTOR_KEY: randomBytes(33).toString('base64'),
        },
        gatehousePort,
      );
      const enrol = await (await browser!.newContext()).newPage();
      enrol.setDefaultTimeout(10_000);
      await home(enrol, 'Not signed in');
      await enrol.getByLabel('Email').fill(grace.newEmail);
      await enrol.getByLabel('Password').fill(grace.reset);
      const since = smtp!.received.length;
      await enrol.getByRole('button', { name: 'Sign in', exact: true }).click();
      const qr = enrol.getByRole('img', { name: 'QR code of the key for your authenticator app' });
      await qr.waitFor();
      // Drawn as an image (the data: URL loaded), not left broken.
      expect(await qr.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
      const key = (await text(enrol, 'app-key')).replaceAll(' ', '');
      expect(key).toMatch(/^[A-Z2-7]{32}$/);
      const totp = new TOTP({ secret: Secret.fromBase32(key) });
      await shot(enrol, '9-enrolment-step');

      const now = Date.now();
      const window = new Set([-1, 0, 1].map((n) => totp.generate({ timestamp: now + n * 30_000 })));
      let wrong = '000000';
      for (let n = 1; window.has(wrong); n += 1) wrong = String(n).padStart(6, '0');
      // The password alone sets up nothing: Gatehouse mailed her a code, read from the catcher.
      const mailed = await smtp!.mailTo(grace.newEmail, since, /set up two-step sign-in/);
      const emailCode = /Your code: ([A-Z0-9]{8})/.exec(mailed.parsed.text ?? '')?.[1] ?? '';
      expect(emailCode).toMatch(/^[A-Z0-9]{8}$/);
      const fromMail = enrol.getByLabel(`Code we mailed to ${grace.newEmail}`);
      const code = enrol.getByLabel('Code your app shows now');
      await fromMail.fill('AAAAAAAA');
      await code.fill(totp.generate());
      await enrol.getByRole('button', { name: 'Verify' }).click();
      await enrol.getByRole('alert').filter({ hasText: 'not the code we mailed you' }).waitFor();
      await shot(enrol, '9a-mailed-code-refused');
      await fromMail.fill(emailCode);
      await code.fill(wrong);
      await enrol.getByRole('button', { name: 'Verify' }).click();
      await enrol.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
      await code.fill(totp.generate());
      await enrol.getByRole('button', { name: 'Verify' }).click();
      await waitFor(enrol, 'server-gatehouse', 'Signed in as Grace Hopper');
      await enrol.getByRole('link', { name: 'Dashboard' }).click();
      await waitFor(enrol, 'dashboard', 'Grace Hopper, this page is yours');
      await enrol.context().close();
    });

    it('without AUTH_URL on Gatehouse, sign-in is refused as cross-site and the form says what to set', async (context) => {
      if (unavailable) return context.skip(unavailable);
      await stopGroup(servers[0]!);
      const gatehouse = await serve('npm start', gatehouseDir, gatehouseEnv, gatehousePort);
      const fresh = await browser!.newPage();
      await fresh.goto(appUrl);
      await fresh.getByLabel('Email').fill('ada@example.com');
      await fresh.getByLabel('Password').fill(password);
      await fresh.getByRole('button', { name: 'Sign in', exact: true }).click();
      await fresh.getByRole('alert').filter({ hasText: 'is AUTH_URL on Gatehouse' }).waitFor();
      await shot(fresh, '8-no-auth-url');
      expect(await text(fresh, 'server-gatehouse')).toBe('Not signed in');
      expect(gatehouse.output()).toMatch(/403/);
      await fresh.close();
    });
  },
);
