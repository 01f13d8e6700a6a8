// What the Express and Python guides' tests share for issue 41: two-step sign-in on Gatehouse's
// own page (the code step, the enrolment step), the other ways in (a provider, a mailed code),
// Gatehouse stopped under a running app, the person's device and network as Gatehouse records
// them, and screenshots in three looks.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Secret, TOTP } from 'otpauth';
import type { Browser, LaunchOptions, Page } from 'playwright-core';
import { expect } from 'vitest';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { accepts } from '../helpers/processes.js';
import type { LoopbackSmtp } from '../helpers/smtp.js';
import { turnOnTotpNow, unspentCode } from '../helpers/totp-codes.js';
import { root, type GuideRun } from './follow-guide.js';

/** The guides' product name (PAGE_PRODUCT_NAME in their Gatehouse start command). */
export const productName = 'My app';

/** The client secret the tests' identity provider (test/helpers/oidc-idp.ts) gives the app. */
export const oidcSecret = 'my-app-client-secret-0123456789';

/**
 * Gatehouse's settings for the guides' "Sign in with … any OpenID Connect provider" and "Sign in
 * by e-mail" sections, as those sections say them.
 */
export function waysInEnv(issuer: string): NodeJS.ProcessEnv {
  return {
    AUTH_OIDC_ISSUER: issuer,
    AUTH_OIDC_ID: 'my-app',
    AUTH_OIDC_SECRET: oidcSecret,
    AUTH_OIDC_NAME: 'Acme SSO',
    EMAIL_SIGNIN: 'on',
  };
}

/** How Gatehouse shows a loopback address's network (src/util/ip-prefix.ts). */
export const loopbackNetwork = 'this computer (loopback)';

/**
 * An address of this machine that is not loopback (the first IPv4 one), or undefined. Chromium
 * reaches the app at `localhost` through it, so the app sees a visitor from a real network and
 * a test can tell the visitor's network from the app's own (loopback).
 */
function visitorAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((face) => face !== undefined && face.family === 'IPv4' && !face.internal)?.address;
}

/**
 * Chromium's launch options, and the network Gatehouse should record for its visits: `localhost`
 * resolved to a non-loopback address of this machine where there is one (the app and nginx listen
 * on every address), else loopback as it is.
 */
export function browserThroughNetwork(executablePath: string): {
  launch: LaunchOptions;
  network: string;
} {
  const address = visitorAddress();
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'];
  if (address === undefined) return { launch: { executablePath, args }, network: loopbackNetwork };
  return {
    launch: { executablePath, args: [...args, `--host-resolver-rules=MAP localhost ${address}`] },
    network: `${address.split('.').slice(0, 3).join('.')}.0/24`,
  };
}

/** Screenshots of `page` at light, dark and 390 px wide, as test-artifacts/<guide>/<name>-*.png. */
export async function shots(page: Page, guide: string, name: string): Promise<void> {
  const dir = path.join(root, 'test-artifacts', guide);
  fs.mkdirSync(dir, { recursive: true });
  const size = page.viewportSize() ?? { width: 1280, height: 720 };
  const shot = (look: string) =>
    page.screenshot({ path: path.join(dir, `${name}-${look}.png`), fullPage: true });
  await shot('light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('dark');
  await page.setViewportSize({ width: 390, height: 844 });
  await shot('390');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(size);
}

/**
 * Turns TOTP on for `email` over Gatehouse's API, as a person does on its account page: a secret
 * on the real clock and ten recovery codes.
 */
export async function turnOnTotpFor(
  gatehouse: string,
  origin: string,
  email: string,
  password: string,
): Promise<{ secret: Secret; recoveryCodes: string[] }> {
  const api = new Client(gatehouse, { origin });
  expect((await api.signIn(email, password)).status).toBe(200);
  const secret = await turnOnTotpNow(api);
  const made = await postWithCsrf(api, '/api/account/recovery-codes', {});
  expect(made.status).toBe(200);
  const { recoveryCodes } = (await made.json()) as { recoveryCodes: string[] };
  return { secret, recoveryCodes };
}

/** A right-looking code that none of the window's steps has: refused for being wrong. */
export function wrongCode(secret: Secret): string {
  const now = Date.now();
  const right = new Set(
    [-2, -1, 0, 1, 2].map((n) => TOTP.generate({ secret, timestamp: now + n * 30_000 })),
  );
  let wrong = '000000';
  for (let n = 1; right.has(wrong); n += 1) wrong = String(n).padStart(6, '0');
  return wrong;
}

/**
 * On Gatehouse's code step (a right password of an account with TOTP): a wrong code is refused
 * in words, and `secret`'s next code signs in. Answers when the code is sent.
 */
export async function passCodeStep(page: Page, secret: Secret, guide: string): Promise<void> {
  await page.getByLabel('Code from your authenticator app').waitFor();
  const url = new URL(page.url());
  expect(url.pathname).toBe('/api/auth/signin');
  expect(url.searchParams.get('code')).toBe('second_factor_required');
  const code = page.getByLabel('Code from your authenticator app');
  await code.fill(wrongCode(secret));
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
  await shots(page, guide, 'code-step-wrong-code');
  await code.fill(unspentCode(secret));
  await page.getByRole('button', { name: 'Continue' }).click();
}

/**
 * On Gatehouse's enrolment step (SECOND_FACTOR=required, an account without a factor): the QR
 * code and key, the code mailed to `email` since `since` mails and the app's code turn TOTP on;
 * the recovery codes follow, then "Continue". Answers the new secret.
 */
export async function passEnrolmentStep(
  page: Page,
  smtp: LoopbackSmtp,
  { email, since, guide }: { email: string; since: number; guide: string },
): Promise<Secret> {
  const qr = page.getByRole('img', { name: 'QR code of the key for your authenticator app' });
  await qr.locator('svg').waitFor();
  const key = (await page.locator('.fact code').innerText()).replaceAll(' ', '');
  const secret = Secret.fromBase32(key);
  const mailed = await smtp.mailTo(email, since, /set up two-step sign-in/);
  const emailCode = /Your code: ([A-Z0-9]{8})/.exec(mailed.parsed.text ?? '')?.[1] ?? '';
  expect(emailCode).toMatch(/^[A-Z0-9]{8}$/);
  await shots(page, guide, 'enrolment-step');
  await page.getByLabel(`Code from the mail we sent to ${email}`).fill(emailCode);
  await page.getByLabel('Code from your authenticator app').fill(TOTP.generate({ secret }));
  await page.getByRole('button', { name: 'Turn on and sign in' }).click();
  await page.getByRole('heading', { name: 'Two-step sign-in is on' }).waitFor();
  expect(await page.locator('ul.codes li').count()).toBe(10);
  await shots(page, guide, 'enrolment-recovery-codes');
  await page.getByRole('link', { name: 'Continue' }).click();
  return secret;
}

/**
 * From the app's pages with the ways in (`openSignIn`, for each way): a new person signs in with the provider's
 * button (the provider has logged "Sam Provider" in), then, in a fresh context, another by the
 * code mailed to `mailedTo`, typed in the form field labelled `mailField`, then on Gatehouse's
 * "check your inbox" page. Each lands back on the app, where `signedIn` sees them.
 */
export async function signInOtherWays(
  browser: Browser,
  openSignIn: (page: Page, way: 'provider' | 'mail') => Promise<void>,
  signedIn: (page: Page, name: string) => Promise<void>,
  {
    smtp,
    mailedTo,
    mailField,
    guide,
  }: { smtp: LoopbackSmtp; mailedTo: string; mailField: string; guide: string },
): Promise<void> {
  const sso = await (await browser.newContext()).newPage();
  sso.setDefaultTimeout(10_000);
  await openSignIn(sso, 'provider');
  await sso.getByRole('button', { name: 'Continue with Acme SSO' }).click();
  await signedIn(sso, 'Sam Provider');
  await sso.context().close();

  const mailed = await (await browser.newContext()).newPage();
  mailed.setDefaultTimeout(10_000);
  await openSignIn(mailed, 'mail');
  await mailed.getByLabel(mailField).fill(mailedTo);
  const since = smtp.received.length;
  await mailed.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await mailed.getByRole('heading', { name: 'Check your inbox' }).waitFor();
  await shots(mailed, guide, 'check-your-inbox');
  const mail = await smtp.mailTo(mailedTo, since, new RegExp(`Create your ${productName} account`));
  const code = /enter this code on the page: ([A-Z0-9]+)/.exec(mail.parsed.text ?? '')?.[1];
  await mailed.getByLabel('Code from the mail').fill(code ?? '');
  await mailed.getByRole('button', { name: 'Sign in with the code' }).click();
  // A new account is named after its address until its owner names it.
  await signedIn(mailed, mailedTo.split('@')[0]!);
  await mailed.context().close();
}

/** The signed-in person's own record (`GET /api/account/events`), read from their page. */
export async function ownEvents(
  page: Page,
): Promise<{ type: string; ip: string; device: string }[]> {
  const answer = await page.evaluate(async () => (await fetch('/api/account/events')).json());
  return (answer as { events: { type: string; ip: string; device: string }[] }).events;
}

/**
 * Expects the person's events of `types` (newest of each) to show their browser's User-Agent and
 * `network`: what the app passed on for them, not its own ("node", "Python-urllib", loopback).
 */
export async function expectRecordedAsVisitor(
  page: Page,
  types: string[],
  network: string,
): Promise<void> {
  const userAgent = await page.evaluate(() => navigator.userAgent);
  // Events are written once their answer is out: the last may take a moment.
  const has = (events: { type: string }[]) => types.every((t) => events.some((e) => e.type === t));
  await expect.poll(async () => has(await ownEvents(page))).toBe(true);
  const events = await ownEvents(page);
  for (const type of types)
    expect(events.find((event) => event.type === type)).toMatchObject({
      type,
      device: userAgent,
      ip: network,
    });
}

/**
 * Stops the Gatehouse a guide started in `gatehouseDir` (every process group running there: the
 * shell, npm, the server), and waits until `port` refuses. The guide's harness starts it again
 * with `restartGatehouse`, which finds its group gone.
 */
export async function stopGatehouse(gatehouseDir: string, port: number): Promise<void> {
  const groups = new Set<number>();
  for (const pid of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/cwd`) !== gatehouseDir) continue;
      // /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces, not ')'.
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      groups.add(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]));
    } catch {
      // The process ended while being read, or is not ours to read.
    }
  }
  for (const group of groups) process.kill(-group, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while ((await accepts(port)) && Date.now() < deadline) await sleep(50);
  expect(await accepts(port)).toBe(false);
}

/** What the examples' pages say while Gatehouse does not answer. */
export const downWords = 'Gatehouse, the sign-in service, is not answering: try again in a moment.';

/**
 * Stops the guide's Gatehouse under the running app: each of `paths` on `origin` answers 503 with
 * the page's words (screenshot `gatehouse-down`), and the servers' output matches `logged` (the
 * app's log of the cause). Then Gatehouse starts again as the guide started it, with
 * SECOND_FACTOR=required and a FACTOR_KEY: the test's one restart.
 */
export async function downThenRequired(
  guide: GuideRun,
  browser: Browser,
  {
    origin,
    paths,
    logged,
    name,
  }: { origin: string; paths: string[]; logged: RegExp; name: string },
): Promise<void> {
  await stopGatehouse(guide.gatehouseDir, guide.port(3000));
  const down = await (await browser.newContext()).newPage();
  for (const path of paths) {
    const answer = await down.goto(`${origin}${path}`);
    expect(answer?.status()).toBe(503);
    await down.getByRole('alert').filter({ hasText: downWords }).waitFor();
  }
  await down.goto(origin);
  await shots(down, name, 'gatehouse-down');
  await down.context().close();
  expect(guide.output()).toMatch(logged);
  await guide.restartGatehouse({
    SECOND_FACTOR: 'required',
    FACTOR_KEY: randomBytes(33).toString('base64'),
  });
}
