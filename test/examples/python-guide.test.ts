import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nginxPath } from '../helpers/nginx.js';
import { exampleFiles, followGuide, guideShape, root, type GuideRun } from './follow-guide.js';

// docs/integrate-python.md, followed as written (test/examples/follow-guide.ts says how): a
// Python app (standard library only) and Gatehouse behind one nginx, driven in Chromium.

const guidePath = 'docs/integrate-python.md';
const exampleDir = 'examples/python';
const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
const hasPython = spawnSync('python3', ['--version']).status === 0;
const missing = [
  ...[chromiumPath, nginxPath].filter((file) => !fs.existsSync(file)),
  ...(hasPython ? [] : ['python3']),
];

describe(`${guidePath} shows ${exampleDir}`, () => {
  const { blocks, runs } = guideShape(guidePath);

  it('every file block is its file, byte for byte (node scripts/build/sync-guide.ts rewrites them)', () => {
    for (const block of blocks) {
      if (block.kind !== 'file') continue;
      expect(block.body, `${block.path} differs from its block`).toBe(
        fs.readFileSync(path.join(root, block.path), 'utf8'),
      );
    }
  });

  it('shows every file of the example whole, but its README', () => {
    const shown = blocks.flatMap((b) => (b.kind === 'file' ? [b.path] : []));
    const expected = exampleFiles(path.join(root, exampleDir))
      .filter((file) => file !== 'README.md')
      .map((file) => `${exampleDir}/${file}`);
    expect([...shown].sort()).toEqual(expected);
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

    beforeAll(async () => {
      guide = await followGuide({
        name: 'python',
        guidePath,
        exampleDir,
        ports: [3000, 8000, 8080],
        serverPorts: [8000, 8080],
      });
      await guide.run();
      site = guide.origin(8080);
      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
      page = await browser.newPage();
      console.log(`python guide steps, ms: ${JSON.stringify(guide.timings)}`);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await guide?.stop();
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
  },
);
