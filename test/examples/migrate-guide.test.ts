import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { decode } from '@auth/core/jwt';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplePaths, followGuide, guideShape, root, type GuideRun } from './follow-guide.js';
import { hasChromium, launchChromium } from '../helpers/chromium.js';
import { firstPass } from '../helpers/passes.js';

// docs/migrate-from-authjs.md, followed as written (issue 38's "the guide followed by CI"). Its
// file blocks must be examples/nextjs-authjs's files byte for byte; then, as
// test/examples/follow-guide.ts lays them out, the Auth.js app before the move is installed,
// given a user and started, and Ada signs in to it in Chromium. The guide's cutover follows
// (import checked and made, Gatehouse started with the app's secret as LEGACY_AUTH_SECRET, the
// route handler removed, next.config.ts and auth.ts rewritten, the app built and started again),
// and the same tab stays Ada, with the same id, on a Gatehouse session; the guide's checks (the
// metric, the admin API's sessions list) say so; sign-out ends it, the old cookie put back opens
// nothing, and her old password signs her in. About 40 s, most of it the app's two `next build`s.

const guidePath = 'docs/migrate-from-authjs.md';
const beforeDir = 'examples/nextjs-authjs/before';
const afterDir = 'examples/nextjs-authjs/after';
const password = 'correct horse battery staple';
const cookieName = 'authjs.session-token';
/** The app before the move, installed by `npm test`'s set-up (scripts/test-setup.ts). */
const installed = fs.existsSync(path.join(root, beforeDir, 'node_modules/next/package.json'));

describe(`${guidePath} shows ${beforeDir} and what the move changes`, () => {
  const { runs, shown, stale } = guideShape(guidePath);

  it('every file block is its file, byte for byte (node scripts/build/sync-guide.ts rewrites them)', () => {
    expect(stale).toEqual([]);
  });

  it('shows every file of the app before the move whole, but its lockfile, and every file the move rewrites', () => {
    const expected = [...examplePaths(beforeDir, ['package-lock.json']), ...examplePaths(afterDir)];
    expect(shown).toEqual(expected.sort());
  });

  it('marks the commands this test follows: the app before, the import, Gatehouse, the cutover, the checks', () => {
    expect(runs).toEqual([
      'my-app install',
      'my-app command',
      'my-app command',
      'my-app build',
      'my-app server',
      'gatehouse command',
      'gatehouse command',
      'gatehouse command',
      'gatehouse server',
      'my-app command',
      'my-app build',
      'my-app server',
      'gatehouse command',
      'gatehouse command',
    ]);
  });
});

const skip = !hasChromium
  ? 'chromium not installed'
  : !installed
    ? `${beforeDir} not installed (run \`npm run test:setup\`)`
    : '';

// Once, with the fast paths on: the exchange of an old cookie is checked in both modes by
// move-from-authjs.test.ts and test/auth/legacy-sessions.test.ts; this is the guide's walk.
describe.skipIf(skip !== '' || !firstPass)(
  `following ${guidePath} from a signed-in Auth.js app to Gatehouse${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let guide: GuideRun;
    let browser: Browser;
    let page: Page;
    let app = '';
    let adaId = '';
    let oldCookie = '';

    beforeAll(async () => {
      guide = await followGuide({
        name: 'migrate',
        guidePath,
        exampleDir: beforeDir,
        writes: afterDir,
        ports: [3000, 3001, 9464, 9100],
        serverPorts: [3001, 3001],
      });
      // Step 1: the app before the move, installed, with its secret, tables and Ada, started.
      await guide.run(5);
      app = guide.origin(3001);
      browser = await launchChromium();
      page = await browser.newPage();
      page.setDefaultTimeout(15_000);
    }, 180_000);

    afterAll(async () => {
      console.log(`migrate guide steps, ms: ${JSON.stringify(guide?.timings)}`);
      await browser?.close();
      await guide?.stop();
    });

    const status = (value: 'authenticated' | 'unauthenticated') =>
      page.locator(`#client-session[data-status="${value}"]`).waitFor();
    const text = (id: string) => page.locator(`#${id}`).innerText();
    const sessionCookie = async () =>
      (await page.context().cookies()).find((cookie) => cookie.name === cookieName)?.value;
    /** The app's AUTH_SECRET, as step 1 wrote it. */
    const appSecret = () =>
      /^AUTH_SECRET=(.*)$/m.exec(
        fs.readFileSync(path.join(guide.appDir, '.env.local'), 'utf8'),
      )![1]!;
    /** The admin API, as the guide's step 5 calls it. */
    const admin = async (route: string) => {
      const token = fs
        .readFileSync(path.join(guide.gatehouseDir, 'data/admin-tokens'), 'utf8')
        .trim()
        .split(':')[1];
      const answer = await fetch(`http://127.0.0.1:${guide.port(9100)}/api/admin${route}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return (await answer.json()) as { sessions: Array<{ method: string }> };
    };

    async function signIn() {
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await status('authenticated');
    }

    it('before the move, Ada signs in to the Auth.js app: auth() and useSession() say so, with her id in its user table', async () => {
      const db = new DatabaseSync(path.join(guide.appDir, 'data/app.db'), { readOnly: true });
      try {
        const row = db.prepare('SELECT id FROM user WHERE email = ?').get('ada@example.com');
        adaId = String(row?.id);
      } finally {
        db.close();
      }
      await page.goto(app);
      await status('unauthenticated');
      await signIn();
      const ada = `Signed in as Ada Lovelace (id ${adaId})`;
      expect(await text('client-session')).toBe(ada);
      await page.locator('#server-session', { hasText: ada }).waitFor();
      oldCookie = (await sessionCookie()) ?? '';
      // next-auth's own token: no Gatehouse session id in it.
      const claims = await decode({ token: oldCookie, secret: appSecret(), salt: cookieName });
      expect(claims).toMatchObject({ sub: adaId });
      expect(claims?.sid).toBeUndefined();
    });

    it('the cutover, as written: the import is checked and made, Gatehouse starts, the app is rebuilt on it', async () => {
      // Steps 2 to 4: the secret's file, the import checked and made, Gatehouse started, the
      // route handler removed, next.config.ts and auth.ts written, the app built and started.
      await guide.run(9);
      const [, checked, imported] = guide.said.slice(-5);
      expect(checked).toContain('1 users to add (password hashes: 1 bcrypt)');
      expect(imported).toContain('1 users added (password hashes: 1 bcrypt)');
      expect(fs.existsSync(path.join(guide.appDir, 'app/api/auth'))).toBe(false);
    }, 180_000);

    it('the same tab, reloaded, is still Ada with the same id, in the browser and on the server, on a Gatehouse session', async () => {
      await page.reload();
      await status('authenticated');
      const ada = `Signed in as Ada Lovelace (id ${adaId})`;
      expect(await text('client-session')).toBe(ada);
      // Its session read exchanged the old cookie: a Gatehouse session's, under the app's secret.
      const exchanged = (await sessionCookie()) ?? '';
      expect(exchanged).not.toBe(oldCookie);
      const claims = await decode({ token: exchanged, secret: appSecret(), salt: cookieName });
      expect(claims).toMatchObject({ sub: adaId, sid: expect.any(String) });
      // The app's auth() reads Gatehouse's cookie on the next render, as it read its own.
      await page.reload();
      await status('authenticated');
      expect(await text('server-session')).toBe(ada);
      expect(await text('client-session')).toBe(ada);
    });

    it("the guide's checks say so: the metric counts one exchange, and Ada's sessions list has it, carried over", async () => {
      await guide.run(2);
      const [metrics, sessions] = guide.said.slice(-2);
      expect(metrics).toContain('gatehouse_account_events_total{type="session_migrated"} 1');
      expect(JSON.parse(sessions ?? '')).toMatchObject({
        sessions: [{ method: 'carried_over', current: false }],
      });
    });

    it('signing out ends the session; the old cookie, put back, opens nothing and is cleared', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await status('unauthenticated');
      await page.locator('#server-session', { hasText: 'Not signed in' }).waitFor();
      expect((await admin(`/users/${adaId}/sessions`)).sessions).toEqual([]);

      await page
        .context()
        .addCookies([
          { name: cookieName, value: oldCookie, url: app, httpOnly: true, sameSite: 'Lax' },
        ]);
      await page.reload();
      // The server's auth() only decodes: it reads the old cookie as Ada until Gatehouse, asked
      // by useSession(), refuses it and clears it (the guide's step 5 says so).
      await status('unauthenticated');
      expect(await sessionCookie()).toBeUndefined();
      await page.reload();
      await status('unauthenticated');
      expect(await text('server-session')).toBe('Not signed in');
    });

    it("Ada's old password signs her in to Gatehouse, which keeps it as argon2id from then on", async () => {
      await signIn();
      expect(await text('client-session')).toBe(`Signed in as Ada Lovelace (id ${adaId})`);
      const db = new DatabaseSync(path.join(guide.gatehouseDir, 'data/gatehouse.db'), {
        readOnly: true,
      });
      try {
        const row = db.prepare('SELECT password_hash FROM users WHERE id = ?').get(adaId);
        expect(String(row?.password_hash)).toMatch(/^\$argon2id\$/);
      } finally {
        db.close();
      }
    });
  },
);
