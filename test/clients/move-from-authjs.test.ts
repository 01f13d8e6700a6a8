import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Auth } from '@auth/core';
import Credentials from '@auth/core/providers/credentials';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serviceDatabase,
  startAccountService,
  type AccountService,
} from '../account/account-service.js';
import { hasChromium, launchChromium } from '../helpers/chromium.js';
import { nextMissing } from '../helpers/next-app.js';
import { buildNextAuthPage } from '../helpers/next-auth-page.js';
import { freePort } from '../helpers/processes.js';

// The move from Auth.js as a user lives it (issue 38): a real Auth.js app (Auth.js's own
// `Auth()` with its Credentials provider, a bcrypt column in the app's SQLite users table, JWT
// sessions under its AUTH_SECRET) behind the app's origin, and the page an Auth.js app ships
// (next-auth/react's useSession, bundled by esbuild). Ada signs in in Chromium. Then the cutover:
// the users are exported and imported into Gatehouse, and the origin's /api/auth is pointed at
// Gatehouse with the old secret as LEGACY_AUTH_SECRET. The same browser, reloaded, is still
// Ada, same id; its next read carries a Gatehouse cookie; signing out ends it, and the old cookie,
// put back, opens nothing.
// migrate-guide.test.ts walks the same move through docs/migrate-from-authjs.md with a real
// Next.js app (next build, next-auth's route handler, the Drizzle adapter's tables), once, with
// the fast paths on; this one is quick enough to run in both modes, so the exchange is seen in a
// browser through the session read's front door and through the Auth.js route alike.

const testRequire = createRequire(new URL('../package.json', import.meta.url));
const bcryptjs = testRequire('bcryptjs') as {
  hashSync(password: string, cost: number): string;
  compareSync(password: string, hash: string): boolean;
};
const oldSecret = 'the-old-apps-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const password = 'correct horse battery staple';
const ada = { id: 'clx0ada0000001', email: 'ada@example.com', name: 'Ada Lovelace' };
const skip = !hasChromium ? 'chromium not installed' : nextMissing();

/** The old app's own store: Prisma's `User` table with the app's bcrypt column. */
function oldAppDatabase(file: string): DatabaseSync {
  const db = new DatabaseSync(file);
  db.exec(`create table "User" (id text primary key, name text, email text unique,
    "emailVerified" integer, image text, password text)`);
  db.prepare('insert into "User" (id, name, email, password) values (?, ?, ?, ?)').run(
    ada.id,
    ada.name,
    ada.email,
    bcryptjs.hashSync(password, 10),
  );
  return db;
}

/** The old app's /api/auth: Auth.js itself, as next-auth v5 runs it. */
function oldAuthjs(db: DatabaseSync) {
  const find = db.prepare('select id, name, email, password from "User" where email = ?');
  return (request: Request) =>
    Auth(request, {
      secret: oldSecret,
      trustHost: true,
      basePath: '/api/auth',
      session: { strategy: 'jwt' },
      providers: [
        Credentials({
          credentials: { email: {}, password: {} },
          authorize(credentials) {
            const row = find.get(String(credentials.email)) as
              { id: string; name: string; email: string; password: string } | undefined;
            if (
              row === undefined ||
              !bcryptjs.compareSync(String(credentials.password), row.password)
            )
              return null;
            return { id: row.id, name: row.name, email: row.email };
          },
        }),
      ],
    });
}

/** Node's request as a Web Request, for Auth.js. */
async function webRequest(request: http.IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers))
    if (typeof value === 'string') headers.set(name, value);
  return new Request(new URL(request.url ?? '/', origin), {
    method: request.method,
    headers,
    ...(chunks.length > 0 && { body: Buffer.concat(chunks) }),
  });
}

/**
 * The app's origin: its page, and /api/* sent to `target` (the old Auth.js, then Gatehouse): the
 * one setting a move changes.
 */
function appOrigin(www: string, oldApp: ReturnType<typeof oldAuthjs>, origin: string) {
  let target: 'authjs' | URL = 'authjs';
  const server = http.createServer((request, response) => {
    const url = request.url ?? '/';
    if (url === '/' || url === '/app.js') {
      const file = url === '/' ? 'index.html' : 'app.js';
      response.writeHead(200, {
        'content-type': url === '/' ? 'text/html' : 'text/javascript',
      });
      response.end(fs.readFileSync(path.join(www, file)));
      return;
    }
    if (target === 'authjs') {
      void webRequest(request, origin)
        .then(oldApp)
        .then(async (answer) => {
          const headers: Record<string, string | string[]> = {};
          answer.headers.forEach((value, name) => {
            if (name !== 'set-cookie') headers[name] = value;
          });
          headers['set-cookie'] = answer.headers.getSetCookie();
          response.writeHead(answer.status, headers);
          response.end(Buffer.from(await answer.arrayBuffer()));
        });
      return;
    }
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: url,
        method: request.method,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    request.pipe(upstream);
  });
  return {
    server,
    pointAt(next: URL) {
      target = next;
    },
  };
}

describe.skipIf(skip !== '')(
  `moving an Auth.js app onto Gatehouse in Chromium${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let dir: string;
    let browser: Browser;
    let page: Page;
    let origin: string;
    let front: ReturnType<typeof appOrigin>;
    let gatehouse: AccountService | undefined;
    let dispose = async () => undefined as void;
    let oldDb: DatabaseSync;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-move-'));
      const www = path.join(dir, 'www');
      fs.mkdirSync(www);
      await buildNextAuthPage(www);
      oldDb = oldAppDatabase(path.join(dir, 'old-app.db'));
      const port = await freePort();
      origin = `http://127.0.0.1:${port}`;
      front = appOrigin(www, oldAuthjs(oldDb), origin);
      await new Promise<void>((resolve) => front.server.listen(port, '127.0.0.1', resolve));
      browser = await launchChromium();
      page = await browser.newPage();
    });
    afterAll(async () => {
      await browser?.close();
      front?.server.close();
      await gatehouse?.stop();
      await dispose();
      oldDb?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const status = (value: 'authenticated' | 'unauthenticated') =>
      page.locator(`#status.${value}`).waitFor({ timeout: 10_000 });
    const sessionShown = async () =>
      JSON.parse(await page.locator('#session').innerText()) as {
        user?: { id?: string; email?: string };
      } | null;
    const sessionCookie = async () =>
      (await page.context().cookies()).find((cookie) => cookie.name === 'authjs.session-token')
        ?.value;

    it('nobody is signed out: the same browser is the same user after the cutover, until they sign out', async () => {
      // Before: Ada signs in to the Auth.js app.
      await page.goto(origin);
      await status('unauthenticated');
      await page.getByLabel('Email').fill(ada.email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await status('authenticated');
      const oldCookie = await sessionCookie();
      expect(oldCookie).toBeDefined();

      // The cutover: the users exported (the app's bcrypt column as it is) and imported.
      const rows = oldDb.prepare('select id, name, email, password from "User"').all() as Array<{
        id: string;
        name: string;
        email: string;
        password: string;
      }>;
      const jsonl = rows
        .map((row) =>
          JSON.stringify({
            id: row.id,
            email: row.email,
            name: row.name,
            passwordHash: row.password,
          }),
        )
        .join('\n');
      const database = await serviceDatabase('sqlite');
      dispose = database.dispose;
      gatehouse = await startAccountService(database.env, {
        AUTH_URL: origin,
        LEGACY_AUTH_SECRET: oldSecret,
        LEGACY_SESSIONS_UNTIL: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
      });
      const imported = await gatehouse.cli(['users', 'import', '-'], jsonl);
      expect(imported.stdout).toContain('1 users added (password hashes: 1 bcrypt)');
      front.pointAt(new URL(gatehouse.url));

      // After: the same browser, reloaded, is still Ada, with the same id.
      await page.reload();
      await status('authenticated');
      expect(await sessionShown()).toMatchObject({ user: { id: ada.id, email: ada.email } });
      const newCookie = await sessionCookie();
      expect(newCookie).toBeDefined();
      expect(newCookie).not.toBe(oldCookie);
      // Her next page load is an ordinary Gatehouse session.
      await page.reload();
      await status('authenticated');
      expect(await sessionShown()).toMatchObject({ user: { id: ada.id } });

      // Signing out ends it; the old cookie, put back, opens nothing.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await status('unauthenticated');
      await page.context().addCookies([
        {
          name: 'authjs.session-token',
          value: oldCookie ?? '',
          url: origin,
          httpOnly: true,
          sameSite: 'Lax',
        },
      ]);
      await page.reload();
      await status('unauthenticated');

      // Her old password signs in to Gatehouse, which keeps it as argon2id from now on.
      await page.getByLabel('Email').fill(ada.email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await status('authenticated');
      expect(await sessionShown()).toMatchObject({ user: { id: ada.id } });
    });
  },
);
