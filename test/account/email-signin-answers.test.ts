import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import type { LoopbackSmtp, SmtpMode } from '../helpers/smtp.js';
import { browserAccept } from '../pages/page-helpers.js';
import { startMailService, type AccountService, type MailService } from './account-service.js';
import { bytesOf, equalAnswers } from './equal-answers.js';

/*
 * What asking for a sign-in mail gives away: nothing (issue 40; adoption spec §2). For an
 * address with an account, one without, a disabled one and one locked by wrong passwords,
 * `POST /api/auth/signin/email` answers the same bytes (status, headers but Date, body) and, by
 * the sign-in's own statistical test (interleaved pairs in random order, medians within 10 %),
 * in the same time, with SMTP up and down; so does the next request on the connection. The one
 * value that differs between two answers is random: the typed address, sealed under a fresh
 * nonce at one length for every address, kept for the code's form.
 */

const password = 'correct horse battery staple';
const timingSamples = 300;
const kinds = ['known', 'disabled', 'locked'] as const;
const addresses = {
  unknown: 'unknown@example.com',
  known: 'known@example.com',
  disabled: 'disabled@example.com',
  locked: 'locked@example.com',
};

/**
 * The answer as compared: the one value that differs from answer to answer, the sealed address
 * kept for the code's form (a fresh nonce each time, one length for every address), masked.
 */
async function masked(response: Response): Promise<Response> {
  const headers = new Headers();
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers.append(name, value);
  });
  for (const cookie of response.headers.getSetCookie())
    headers.append(
      'set-cookie',
      cookie.replace(/^(gatehouse\.email-signin=)[\w-]{379};/, '$1<sealed>;'),
    );
  return new Response(await response.arrayBuffer(), { status: response.status, headers });
}

/** `signIn("email", { email, redirect: false })` as next-auth/react posts it. */
const ask = async (client: Client, csrfToken: string, email: string) =>
  masked(
    await client.postForm(
      '/api/auth/signin/email',
      { email, csrfToken, callbackUrl: `${client.baseUrl}/app` },
      { 'x-auth-return-redirect': '1' },
    ),
  );

describe('asking for a sign-in mail: the same answer and time for every address', () => {
  let mailed: MailService;
  let service: AccountService;
  let smtp: LoopbackSmtp;
  const client = () => new Client(service.url, { 'user-agent': 'TimingTest/1.0' });

  beforeAll(async () => {
    mailed = await startMailService({
      env: {
        EMAIL_SIGNIN: 'on',
        MAIL_RETRY_SECONDS: '1',
        // Hundreds of requests from one client for each address: the budgets are not under
        // test here, and an address's sent budget running out would make every kind's work
        // after the answer alike, and this test blind to it.
        THROTTLE_EMAIL_MAX_FAILURES: '100000',
        THROTTLE_IP_MAX_FAILURES: '100000',
        // So the lock is reached by attempts, as a client signing in in a loop reaches it.
        THROTTLE_EMAIL_MAX_ATTEMPTS: '5',
      },
      users: [addresses.known, addresses.disabled, addresses.locked],
      password,
    });
    ({ service, smtp } = mailed);
    const disabled = await service.cli(['users', 'disable', '--email', addresses.disabled]);
    expect(disabled.code).toBe(0);
    // Its sign-in locked for the window: too many attempts.
    const guesser = client();
    for (let i = 0; i < 5; i += 1) await guesser.signIn(addresses.locked, `wrong password ${i}`);
    const locked = await guesser.signIn(addresses.locked, password);
    expect(((await locked.json()) as { url: string }).url).toContain('code=rate_limited');
  }, 60_000);
  afterAll(() => mailed?.close());

  it.each(['up', 'down'] as SmtpMode[])(
    'SMTP %s: known, disabled and locked addresses get the bytes and the time an unknown one does',
    async (mode) => {
      await smtp.setMode(mode);
      const browser = client();
      const csrf = await browser.csrfToken();
      // The callback-url cookie is set once, by the first request that names it.
      await (await ask(browser, csrf, addresses.unknown)).arrayBuffer();
      for (const kind of kinds) {
        const { bytes, within } = await equalAnswers({
          label: `email sign-in timing, ${kind}, SMTP ${mode}`,
          baseline: 'unknown',
          compared: kind,
          request: {
            unknown: () => ask(browser, csrf, addresses.unknown),
            [kind]: () => ask(browser, csrf, addresses[kind]),
          } as Record<'unknown' | typeof kind, () => Promise<Response>>,
          samples: timingSamples,
        });
        expect(bytes[kind].size).toBe(1);
        expect([...bytes.unknown]).toEqual([...bytes[kind]]);
        expect([...bytes[kind]][0]).toContain('verify-request?provider=email');
        expect([...bytes[kind]][0]).toContain('gatehouse.email-signin=<sealed>; Path=/api/auth;');
        expect(within).toBe(true);
      }
    },
    300_000,
  );

  it("the next request on the connection waits alike: the account's work is not on its heels", async () => {
    await smtp.setMode('up');
    const browser = client();
    const csrf = await browser.csrfToken();
    await (await ask(browser, csrf, addresses.unknown)).arrayBuffer();
    const { within } = await equalAnswers({
      label: 'the request after asking for a sign-in mail',
      baseline: 'unknown',
      compared: 'known',
      before: {
        known: () => ask(browser, csrf, addresses.known),
        unknown: () => ask(browser, csrf, addresses.unknown),
      },
      request: {
        known: () => browser.request('/api/auth/csrf'),
        unknown: () => browser.request('/api/auth/csrf'),
      },
      samples: timingSamples,
    });
    expect(within).toBe(true);
  }, 120_000);

  it("a browser's form post: the same answer for every address, but for the sealed address's random value", async () => {
    const browser = new Client(service.url, {
      accept: browserAccept,
      origin: service.url,
      'sec-fetch-site': 'same-origin',
    });
    const csrfToken = await browser.csrfToken();
    const form = async (email: string) =>
      masked(
        await browser.postForm('/api/auth/signin/email', {
          email,
          csrfToken,
          callbackUrl: `${service.url}/app`,
        }),
      );
    // The callback-url cookie is set once, by the first request that names it.
    await (await form(addresses.unknown)).arrayBuffer();
    const seen = new Set<string>();
    for (const email of Object.values(addresses)) {
      const response = await form(email);
      expect(response.status).toBe(302);
      seen.add(await bytesOf(response));
    }
    expect(seen.size).toBe(1);
  });
});
