import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nginxPath } from '../helpers/nginx.js';
import { exampleFiles, followGuide, guideShape, root, type GuideRun } from './follow-guide.js';

// docs/integrate-spa.md, followed as written (test/examples/follow-guide.ts says how): the page
// through Vite's dev-server proxy, then its build behind nginx, each driven in Chromium.

const guidePath = 'docs/integrate-spa.md';
const exampleDir = 'examples/spa';
const chromiumPath = '/usr/bin/chromium';
const password = 'correct horse battery staple';
const missing = [chromiumPath, nginxPath].filter((file) => !fs.existsSync(file));

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

  it('shows every file of the example whole, but its README and lockfile', () => {
    const shown = blocks.flatMap((b) => (b.kind === 'file' ? [b.path] : []));
    const expected = exampleFiles(path.join(root, exampleDir))
      .filter((file) => file !== 'README.md' && file !== 'package-lock.json')
      .map((file) => `${exampleDir}/${file}`);
    expect([...shown].sort()).toEqual(expected);
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

    beforeAll(async () => {
      guide = await followGuide({
        name: 'spa',
        guidePath,
        exampleDir,
        ports: [3000, 5173, 8080],
        serverPorts: [5173, 8080],
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
    });

    /** Signs in and out on the page at `origin`, checking what the guide says on the way. */
    async function signInAndOut(origin: string, start: string) {
      const context: BrowserContext = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${origin}${start}`);
      const who = page.locator('#who');
      await page.locator('#who', { hasText: 'Not signed in' }).waitFor();
      expect(await page.locator('#signed-in').isHidden()).toBe(true);

      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
      expect(await who.innerText()).toBe('Not signed in');

      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
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
  },
);
