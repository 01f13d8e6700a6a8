import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, postWithCsrf as post } from '../helpers/account-requests.js';
import { databaseBackends } from '../helpers/backends.js';
import { Client } from '../helpers/client.js';
import { scanEveryLink, secretsIn } from '../helpers/mail-reading.js';
import type { LoopbackSmtp, ReceivedMail } from '../helpers/smtp.js';
import {
  productionWithoutMail,
  startMailService,
  startService,
  type AccountService,
  type MailService,
} from './account-service.js';

/*
 * Open sign-up and REQUIRE_VERIFIED_EMAIL (accounts spec, issue 19 item 4), black-box: the
 * service in process, a real SMTP server on loopback, every mail parsed. SQLite,
 * and PostgreSQL under scripts/with-postgres.sh. A sign-up makes no account: the mail's link
 * (or code), with the password its holder chooses then, does; so a sign-in before then and a
 * link scanner make nothing, and every sign-up mail serves the mailbox's owner.
 */

const password = 'correct horse battery staple';
const otherPassword = 'a different and long passphrase';

const browser = (service: AccountService) =>
  new Client(service.url, { 'user-agent': 'SignupTest/1.0 (X11; Linux x86_64)' });

const signUp = (client: Client, body: Record<string, unknown>) =>
  post(client, '/api/account/signup', body);

/** The verification link and code a person reads in the plain-text body. */
const verificationOf = (mail: ReceivedMail) => secretsIn(mail, '/account/email/verify');

/** A sign-up's confirmation link and code. */
const signupSecretsOf = (mail: ReceivedMail) => secretsIn(mail, '/account/signup/confirm');

/** Confirms a sign-up through the JSON route: "status code". */
const confirm = async (client: Client, body: Record<string, unknown>) => {
  const response = await post(client, '/api/account/email/verify', body);
  if (response.status === 200) {
    expect(await response.json()).toEqual({ status: 'verified' });
    return '200';
  }
  return errorCode(response);
};

const mailsTo = (smtp: LoopbackSmtp, to: string) =>
  smtp.received.filter((mail) => mail.envelopeTo.includes(to));

interface Listed {
  email: string;
  name: string;
  disabled: boolean;
  emailVerified: boolean;
}

async function listUsers(service: AccountService): Promise<Listed[]> {
  const listed = await service.cli(['users', 'list', '--json']);
  expect(listed.code).toBe(0);
  return JSON.parse(listed.stdout) as Listed[];
}

const userOf = async (service: AccountService, email: string) =>
  (await listUsers(service)).find((user) => user.email === email);

/** Signs in as an Auth.js client does; the redirect URL next-auth/react reads `code` from. */
async function signInUrl(client: Client, email: string, pass: string) {
  const response = await client.signIn(email, pass);
  const { url } = (await response.json()) as { url: string };
  return { status: response.status, url: new URL(url) };
}

const backends = databaseBackends('signup');

describe.each(backends)('open sign-up on $name', ({ dialect: backend, skip }) => {
  let mailed: MailService;
  let service: AccountService;
  let smtp: LoopbackSmtp;

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend,
      users: ['taken@example.com', 'gone@example.com'],
      password,
      env: {
        MAIL_RETRY_SECONDS: '1',
        SIGNUP: 'open',
        // Small, so that the limit is reached below; every other test uses addresses of its own.
        THROTTLE_EMAIL_MAX_FAILURES: '4',
      },
    });
    ({ service, smtp } = mailed);
    expect((await service.cli(['users', 'disable', '--email', 'gone@example.com'])).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it.skipIf(skip)(
    'a new address: 202, no account yet, a mail without the name with a link to /account/signup/confirm and a code; the link and the password chosen make a verified account',
    async () => {
      const person = browser(service);
      const answer = await signUp(person, {
        email: ' New.Person@Example.com',
        name: 'New Person https://evil.example/',
        password,
      });
      expect(answer.status).toBe(202);
      expect(await answer.json()).toEqual({ status: 'accepted' });
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(person.sessionCookie()).toBeUndefined();
      const mail = await smtp.mailTo('new.person@example.com', 0, /Confirm your address/);
      const { link, token, code } = signupSecretsOf(mail);
      expect(link.startsWith(`${service.url}/account/signup/confirm?token=`)).toBe(true);
      expect(code).toMatch(/^[A-Z0-9]{8}$/);
      // Nothing the requester typed reaches a mailbox nobody has proven.
      expect(mail.parsed.text).not.toContain('New Person');
      expect(mail.parsed.text).not.toContain('evil.example');
      expect(String(mail.parsed.html)).not.toContain('evil.example');
      expect(mail.parsed.text).toMatch(/^Hello,$/m);
      expect(await userOf(service, 'new.person@example.com')).toBeUndefined();
      // Before the confirmation there is no account: the sign-up's password is just wrong.
      const early = await signInUrl(browser(service), 'new.person@example.com', password);
      expect(early.url.searchParams.get('code')).toBe('credentials');
      // Without the password the secret cannot be used, and stays.
      expect(await confirm(browser(service), { token })).toBe('422 invalid_field');
      expect(await confirm(browser(service), { token, password })).toBe('200');
      expect(await userOf(service, 'new.person@example.com')).toEqual(
        expect.objectContaining({
          name: 'New Person https://evil.example/',
          disabled: false,
          emailVerified: true,
        }),
      );
      // Single use; the code of the same mail is spent with it.
      expect(await confirm(browser(service), { token, password })).toBe('400 invalid_token');
      expect(
        await confirm(browser(service), { email: 'new.person@example.com', code, password }),
      ).toBe('400 invalid_token');
      // No session was made: the person signs in, and the record starts with the creation.
      const signedIn = browser(service);
      expect((await signedIn.signIn('new.person@example.com', password)).status).toBe(200);
      // The sign-in's event is written just after its answer (with its audit entry): wait for it.
      let events: { events: { type: string; device: string; detail?: unknown }[] };
      // A deadline, not a count of tries: a loaded machine may take seconds.
      for (const deadline = Date.now() + 20_000; ;) {
        events = (await (await signedIn.get('/api/account/events')).json()) as typeof events;
        if (events.events.length >= 2 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(events.events.map((event) => event.type)).toEqual(['signin', 'account_created']);
      expect(events.events[1]?.device).toContain('SignupTest/1.0');
    },
  );

  it.skipIf(skip)(
    'the code on another device makes the account with the password chosen there; a weak one makes nothing',
    async () => {
      const email = 'coded@example.com';
      await signUp(browser(service), { email, name: 'Coded', password });
      const { code } = signupSecretsOf(await smtp.mailTo(email, 0, /Confirm your address/));
      const device = browser(service);
      // A code without a password is not tried as a sign-up's.
      expect(await confirm(device, { email, code })).toBe('400 invalid_token');
      expect(await confirm(device, { email, code, password: 'short' })).toBe('422 weak_password');
      expect(await userOf(service, email)).toBeUndefined();
      expect(await confirm(device, { email, code, password: otherPassword })).toBe('200');
      expect(await userOf(service, email)).toEqual(
        expect.objectContaining({ name: 'Coded', emailVerified: true }),
      );
      // The account has the password chosen at the confirmation.
      expect((await browser(service).signIn(email, otherPassword)).status).toBe(200);
      expect(
        (await signInUrl(browser(service), email, password)).url.searchParams.get('code'),
      ).toBe('credentials');
    },
  );

  it.skipIf(skip)(
    'probing: signing in with the sign-up password answers credentials for a free address and for a taken one alike',
    async () => {
      await signUp(browser(service), {
        email: 'probe-free@example.com',
        name: 'P',
        password: otherPassword,
      });
      await signUp(browser(service), {
        email: 'taken@example.com',
        name: 'P',
        password: otherPassword,
      });
      await smtp.mailTo('probe-free@example.com', 0, /Confirm your address/);
      for (const email of ['probe-free@example.com', 'taken@example.com']) {
        const probe = await signInUrl(browser(service), email, otherPassword);
        expect(probe.url.searchParams.get('code'), email).toBe('credentials');
      }
    },
  );

  it.skipIf(skip)(
    'a taken address: the same 202, an "already have an account" mail, and nothing changes',
    async () => {
      const before = await userOf(service, 'taken@example.com');
      const answer = await signUp(browser(service), {
        email: 'taken@example.com',
        name: 'Someone Else',
        password: otherPassword,
      });
      expect(answer.status).toBe(202);
      expect(await answer.json()).toEqual({ status: 'accepted' });
      const mail = await smtp.mailTo('taken@example.com', 0, /already have/);
      expect(mail.parsed.text).toContain(`${service.url}/account/password/forgot`);
      // Greeted by the account's own name, never by the requester's.
      expect(mail.parsed.text).toMatch(/^Hello taken,$/m);
      expect(mail.parsed.text).not.toContain('Someone Else');
      expect(
        mailsTo(smtp, 'taken@example.com').some((m) => /Confirm/.test(m.parsed.subject ?? '')),
      ).toBe(false);
      expect(await userOf(service, 'taken@example.com')).toEqual(before);
      expect((await browser(service).signIn('taken@example.com', password)).status).toBe(200);
      const other = await signInUrl(browser(service), 'taken@example.com', otherPassword);
      expect(other.url.searchParams.get('code')).toBe('credentials');
    },
  );

  it.skipIf(skip)('a disabled address: the same 202, and no mail at all', async () => {
    const answer = await signUp(browser(service), {
      email: 'gone@example.com',
      name: 'Gone',
      password: otherPassword,
    });
    expect(answer.status).toBe(202);
    expect(await answer.json()).toEqual({ status: 'accepted' });
    // A sign-up after it, whose mail arrives: the outbox has done the disabled one's work too.
    await signUp(browser(service), { email: 'after-gone@example.com', name: 'A', password });
    await smtp.mailTo('after-gone@example.com', 0, /Confirm/);
    await sleep(300);
    expect(mailsTo(smtp, 'gone@example.com')).toEqual([]);
    expect((await userOf(service, 'gone@example.com'))?.disabled).toBe(true);
  });

  it.skipIf(skip)('refusals that do not depend on the account come first, in words', async () => {
    const client = browser(service);
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ email: 'not an address', name: 'A', password }, '422 invalid_field', /email/],
      [{ name: 'A', password }, '422 invalid_field', /email/],
      [{ email: 'r1@example.com', name: '   ', password }, '422 invalid_field', /name/],
      [{ email: 'r2@example.com', name: 'x'.repeat(201), password }, '422 invalid_field', /name/],
      [{ email: 'r3@example.com', name: 'A\u0007B', password }, '422 invalid_field', /name/],
      [{ email: 'r4@example.com', name: 'A' }, '422 invalid_field', /password/],
      [
        { email: 'r5@example.com', name: 'A', password: 'short' },
        '422 weak_password',
        /at least 12/,
      ],
      [
        { email: 'r6@example.com', name: 'A', password: 'password1234567' },
        '422 weak_password',
        /commonly used/,
      ],
    ];
    for (const [body, expected, message] of cases) {
      const response = await signUp(client, body);
      const text = await response.text();
      expect(
        `${response.status} ${(JSON.parse(text) as { error: { code: string } }).error.code}`,
      ).toBe(expected);
      expect(text).toMatch(message);
    }
    // Without the CSRF token: refused before anything else.
    const bare = await client.request('/api/account/signup', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'r7@example.com', name: 'A', password }),
    });
    expect(await errorCode(bare)).toBe('403 csrf');
    await sleep(300);
    const listed = (await listUsers(service)).map((user) => user.email);
    expect(listed.filter((email) => /^r\d@/.test(email))).toEqual([]);
  });

  it.skipIf(skip)(
    'throttled per address whether it has an account or not: 429 with Retry-After',
    async () => {
      for (const email of ['limit-new@example.com', 'taken@example.com']) {
        const answers: number[] = [];
        let retryAfter: string | null = null;
        for (let i = 0; i < 6; i += 1) {
          const response = await signUp(browser(service), { email, name: 'L', password });
          answers.push(response.status);
          if (response.status === 429) retryAfter = response.headers.get('retry-after');
          await response.arrayBuffer();
        }
        // taken@ was charged once by the test above.
        expect(answers.filter((status) => status === 429).length).toBeGreaterThan(0);
        expect(answers.every((status) => status === 202 || status === 429)).toBe(true);
        expect(Number(retryAfter)).toBeGreaterThan(0);
      }
    },
  );

  it.skipIf(skip)(
    'several pending sign-ups of one address: any of their mails makes the one account, with the password chosen then, and the rest are void',
    async () => {
      const email = 'race@example.com';
      const answers = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          signUp(browser(service), { email, name: `Racer ${i}`, password: `${password} ${i}` }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202]);
      const deadline = Date.now() + 20_000;
      while (mailsTo(smtp, email).length < 4 && Date.now() < deadline) await sleep(50);
      const mails = mailsTo(smtp, email);
      expect(mails.map((mail) => mail.parsed.subject)).toEqual(
        Array.from({ length: 4 }, () => expect.stringMatching(/Confirm your address/)),
      );
      expect(await userOf(service, email)).toBeUndefined();
      // Whoever holds the mailbox confirms any of them with a password of their choosing; then
      // every other one is void.
      const results: string[] = [];
      for (const mail of mails) {
        const { token } = signupSecretsOf(mail);
        results.push(await confirm(browser(service), { token, password: `${password} 2` }));
      }
      expect(results).toEqual([
        '200',
        '400 invalid_token',
        '400 invalid_token',
        '400 invalid_token',
      ]);
      expect((await listUsers(service)).filter((user) => user.email === email)).toEqual([
        expect.objectContaining({ name: expect.stringMatching(/^Racer \d$/), emailVerified: true }),
      ]);
      expect((await browser(service).signIn(email, `${password} 2`)).status).toBe(200);
      expect(service.output()).not.toMatch(/sign-up: could not/);
    },
  );

  it.skipIf(skip)(
    'pre-hijacking: a stranger signs up with your address; they cannot sign in, and their mail lets only you, its holder, make the account, with your own password and name',
    async () => {
      const victim = 'victim@example.com';
      expect(
        (await signUp(browser(service), { email: victim, name: 'Stranger', password })).status,
      ).toBe(202);
      const trap = await smtp.mailTo(victim, 0, /Confirm your address/);
      // The stranger cannot sign in: there is no account.
      const squatter = await signInUrl(browser(service), victim, password);
      expect(squatter.url.searchParams.get('code')).toBe('credentials');
      // A link scanner opens every link of every mail first: nothing is made or spent.
      await scanEveryLink(smtp);
      expect(await userOf(service, victim)).toBeUndefined();
      // The mailbox holder opens the link: the page asks them to choose the password.
      const owner = browser(service);
      const { link, token } = signupSecretsOf(trap);
      const page = await owner.get(new URL(link).pathname + new URL(link).search);
      expect(page.status).toBe(200);
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await page.text();
      expect(html).toContain('One step left: choose the password of');
      expect(html).toContain('autocomplete="new-password"');
      // Not the stranger's name: nothing they typed is shown to the owner.
      expect(html).not.toContain('Stranger');
      const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const made = await owner.postForm(
        '/account/signup/confirm',
        { csrfToken, token, name: 'Owner', password: otherPassword, passwordRepeat: otherPassword },
        { origin: 'null', 'sec-fetch-site': 'same-origin' },
      );
      expect(made.status).toBe(200);
      expect(await made.text()).toContain('Account created');
      expect(await userOf(service, victim)).toEqual(
        expect.objectContaining({ name: 'Owner', emailVerified: true }),
      );
      // The stranger's password is nobody's; the owner's signs in.
      const stranger = await signInUrl(browser(service), victim, password);
      expect(stranger.url.searchParams.get('code')).toBe('credentials');
      expect((await browser(service).signIn(victim, otherPassword)).status).toBe(200);
      // The link is spent.
      expect(await confirm(browser(service), { token, password })).toBe('400 invalid_token');
    },
  );

  it.skipIf(skip)(
    "a stranger's sign-ups that use up the address's mail leave its owner able to finish: any of those mails makes the owner's account",
    async () => {
      const email = 'flooded@example.com';
      // A stranger spends the address's whole sign-up mail budget (THROTTLE_EMAIL_MAX_FAILURES,
      // 4 here): a sign-up of the owner's own would get no mail in this window.
      const stranger = browser(service);
      for (let i = 0; i < 4; i += 1) {
        const answer = await signUp(stranger, { email, name: `Stranger ${i}`, password });
        expect(answer.status).toBe(202);
      }
      const deadline = Date.now() + 20_000;
      while (mailsTo(smtp, email).length < 4 && Date.now() < deadline) await sleep(50);
      expect(mailsTo(smtp, email)).toHaveLength(4);
      // Any mail in the owner's mailbox makes their account, with their own password.
      const { token } = signupSecretsOf(mailsTo(smtp, email)[2] as (typeof smtp.received)[number]);
      expect(
        await confirm(browser(service), { token, password: otherPassword, name: 'Owner' }),
      ).toBe('200');
      expect(await userOf(service, email)).toEqual(
        expect.objectContaining({ name: 'Owner', emailVerified: true }),
      );
      expect((await browser(service).signIn(email, otherPassword)).status).toBe(200);
    },
  );

  it.skipIf(skip)(
    'the confirm page without script: the link, the password, "Account created" with a sign-in link, and no session',
    async () => {
      const email = 'paged@example.com';
      expect((await signUp(browser(service), { email, name: 'Paged', password })).status).toBe(202);
      const mail = await smtp.mailTo(email, 0, /Confirm your address/).catch((error: unknown) => {
        // What the service said meanwhile, to tell a lost sign-up from a slow delivery.
        throw new Error(`${String(error)}\n${service.output().slice(-3000)}`);
      });
      const { link, token } = signupSecretsOf(mail);
      const client = browser(service);
      const page = await client.get(new URL(link).pathname + new URL(link).search);
      const html = await page.text();
      expect(html).toContain(`the account for <strong>${email}</strong>`);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const done = await client.postForm(
        '/account/signup/confirm',
        { csrfToken, token, username: email, password, passwordRepeat: password },
        { origin: 'null', 'sec-fetch-site': 'same-origin' },
      );
      expect(done.status).toBe(200);
      const doneHtml = await done.text();
      expect(doneHtml).toContain('Account created');
      expect(doneHtml).toContain('href="/api/auth/signin"');
      expect(client.sessionCookie()).toBeUndefined();
      // The link again: spent, and the page says what to do.
      const again = await client.get(new URL(link).pathname + new URL(link).search);
      expect(await again.text()).toContain('This link or code is not valid');
      expect((await browser(service).signIn(email, password)).status).toBe(200);
    },
  );

  it.skipIf(skip)(
    'the sign-in page links to the sign-up page, which works without script',
    async () => {
      const client = browser(service);
      const signInPage = await client.get('/api/auth/signin');
      const signIn = await signInPage.text();
      expect(signIn).toContain('<a href="/account/signup">Create an account</a>');
      const page = await client.get('/account/signup');
      expect(page.status).toBe(200);
      // The sign-in page's own policy: no script at all.
      expect(page.headers.get('content-security-policy')).toBe(
        signInPage.headers.get('content-security-policy'),
      );
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await page.text();
      const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const weak = await client.postForm(
        '/account/signup',
        {
          csrfToken,
          email: 'form@example.com',
          name: 'Form Person',
          password: 'short',
          passwordRepeat: 'short',
        },
        { origin: service.url },
      );
      expect(weak.status).toBe(422);
      const weakHtml = await weak.text();
      expect(weakHtml).toContain('role="alert"');
      expect(weakHtml).toContain('value="form@example.com"');
      expect(weakHtml).not.toContain('value="short"');
      expect(weakHtml).toContain(
        '<input id="passwordRepeat" name="passwordRepeat" type="password"',
      );
      const differ = await client.postForm(
        '/account/signup',
        { csrfToken, email: 'form@example.com', name: 'Form Person', password, passwordRepeat: '' },
        { origin: service.url },
      );
      expect(differ.status).toBe(422);
      expect(await differ.text()).toMatch(/<input id="passwordRepeat" [^>]*aria-invalid="true"/);
      const sent = await client.postForm(
        '/account/signup',
        {
          csrfToken,
          email: 'Form@Example.com',
          name: 'Form Person',
          password,
          passwordRepeat: password,
        },
        { origin: service.url },
      );
      expect(sent.status).toBe(200);
      const sentHtml = await sent.text();
      expect(sentHtml).toContain('Check your inbox');
      expect(sentHtml).toContain('<strong>form@example.com</strong>');
      await smtp.mailTo('form@example.com', 0, /Confirm/);
      // A taken address lands on the very same page.
      const taken = await client.postForm(
        '/account/signup',
        {
          csrfToken,
          email: 'form@example.com',
          name: 'Form Person',
          password,
          passwordRepeat: password,
        },
        { origin: service.url },
      );
      expect(taken.status).toBe(200);
      expect(await taken.text()).toBe(sentHtml);
    },
  );
});

describe('SIGNUP=closed (the default), and mail off', () => {
  it('closed: the route is 403 signup_closed, the page says so, and the sign-in page has no link', async () => {
    const { service, close } = await startMailService();
    try {
      const client = browser(service);
      const answer = await signUp(client, { email: 'a@example.com', name: 'A', password });
      expect(await errorCode(answer)).toBe('403 signup_closed');
      const page = await client.get('/account/signup');
      expect(page.status).toBe(403);
      expect(await page.text()).toContain('does not take sign-ups');
      expect(await (await client.get('/api/auth/signin')).text()).not.toContain(
        'Create an account',
      );
      expect(await listUsers(service)).toEqual([]);
      expect(service.output()).not.toContain('SIGNUP=open');
      // The refusal's words name only the address this browser typed (kept in a cookie), never
      // anything from the URL.
      const crafted = await (
        await client.get(
          '/api/auth/signin?error=CredentialsSignin&code=email_unverified&email=evil%40example.com',
        )
      ).text();
      expect(crafted).toContain(
        'Confirm your address first: we have sent a new link to your address.',
      );
      expect(crafted).not.toContain('evil@example.com');
    } finally {
      await close();
    }
  }, 60_000);

  // SIGNUP=open without SMTP_URL does not start in production (test/boot/start-failures.test.ts).
  it('production without SMTP_URL: 404, no link, and no warning (a sign-up makes no unconfirmed account)', async () => {
    const { service, close } = await startService({ env: productionWithoutMail });
    try {
      const response = await fetch(`${service.url}/api/account/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'a@example.com', name: 'A', password }),
      });
      expect(await errorCode(response)).toBe('404 not_found');
      expect((await fetch(`${service.url}/account/signup`)).status).toBe(404);
      expect((await fetch(`${service.url}/account/signup/confirm`)).status).toBe(404);
      expect(service.output()).not.toMatch(/SIGNUP=open without/);
    } finally {
      await close();
    }
  }, 60_000);
});

describe('REQUIRE_VERIFIED_EMAIL=true with mail off (production without SMTP_URL)', () => {
  it('refuses with the same code, and the page sends people to the administrator, not to a mail', async () => {
    const { service, close } = await startService({
      env: { ...productionWithoutMail, REQUIRE_VERIFIED_EMAIL: 'true' },
    });
    try {
      await service.addUser('offline@example.com', password);
      const refused = await signInUrl(browser(service), 'offline@example.com', password);
      expect(refused.url.searchParams.get('code')).toBe('email_unverified');
      const page = await (
        await browser(service).get('/api/auth/signin?error=CredentialsSignin&code=email_unverified')
      ).text();
      expect(page).toContain(
        'has not been confirmed yet, so you cannot sign in. Ask your administrator',
      );
      expect(page).not.toContain('we have sent');
      expect(service.output()).not.toMatch(/sign-in: could not queue/);
    } finally {
      await close();
    }
  }, 60_000);
});

describe.each(backends)('REQUIRE_VERIFIED_EMAIL=true on $name', ({ dialect: backend, skip }) => {
  let mailed: MailService;
  let service: AccountService;
  let smtp: LoopbackSmtp;

  beforeAll(async () => {
    if (skip) return;
    mailed = await startMailService({
      backend,
      users: ['made@example.com', 'limited@example.com', 'flooded@example.com'],
      password,
      env: {
        MAIL_RETRY_SECONDS: '1',
        SIGNUP: 'open',
        REQUIRE_VERIFIED_EMAIL: 'true',
        THROTTLE_EMAIL_MAX_FAILURES: '3',
      },
    });
    ({ service, smtp } = mailed);
    const verified = await service.cli(
      ['users', 'add', '--email', 'trusted@example.com', '--password-stdin', '--verified'],
      password,
    );
    expect(verified.stdout).toContain('address verified');
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it.skipIf(skip)(
    "a correct password of an unverified address: Auth.js's rejection with code=email_unverified, no session, and a fresh mail",
    async () => {
      expect(service.output()).not.toContain('SIGNUP=open without');
      const client = browser(service);
      const refused = await signInUrl(client, 'made@example.com', password);
      expect(refused.status).toBe(200);
      expect(refused.url.pathname).toBe('/api/auth/signin');
      expect(refused.url.searchParams.get('error')).toBe('CredentialsSignin');
      expect(refused.url.searchParams.get('code')).toBe('email_unverified');
      expect(client.sessionCookie()).toBeUndefined();
      expect(await client.session()).toBeNull();
      const mail = await smtp.mailTo('made@example.com', 0, /Confirm your address/);
      expect(verificationOf(mail).link.startsWith(`${service.url}/account/email/verify`)).toBe(
        true,
      );
      // A wrong password learns nothing of it: the usual refusal, and no mail.
      const guessed = await signInUrl(browser(service), 'made@example.com', otherPassword);
      expect(guessed.url.searchParams.get('code')).toBe('credentials');
      await sleep(300);
      expect(mailsTo(smtp, 'made@example.com')).toHaveLength(1);
      // The operator vouches for the address: sign-in works.
      const verified = await service.cli(['users', 'verify-email', '--email', 'made@example.com']);
      expect(verified.stdout).toBe('verified made@example.com\n');
      const again = await service.cli(['users', 'verify-email', '--email', 'made@example.com']);
      expect(again.stdout).toContain('verified already');
      expect((await browser(service).signIn('made@example.com', password)).status).toBe(200);
      expect((await listUsers(service)).find((u) => u.email === 'made@example.com')).toEqual(
        expect.objectContaining({ emailVerified: true }),
      );
      expect((await service.cli(['users', 'list'])).stdout).toMatch(
        /^made@example\.com\t.*\tenabled\t[0-9a-f-]{36}\tverified\tnone$/m,
      );
    },
  );

  it.skipIf(skip)('`users add --verified` signs in at once', async () => {
    const client = browser(service);
    expect((await client.signIn('trusted@example.com', password)).status).toBe(200);
    expect(client.sessionCookie()).toBeDefined();
  });

  it.skipIf(skip)(
    'the refusal mails within the mail limits: past them the refusal stands and no mail is queued',
    async () => {
      for (let i = 0; i < 6; i += 1) {
        const refused = await signInUrl(browser(service), 'limited@example.com', password);
        expect(refused.url.searchParams.get('code')).toBe('email_unverified');
      }
      // The three the limits allow (polled: the outbox sends them after the answers), then long
      // enough for a fourth to come too, were there one.
      await expect
        .poll(() => mailsTo(smtp, 'limited@example.com').length, { timeout: 20_000 })
        .toBeGreaterThanOrEqual(3);
      await sleep(1_000);
      expect(mailsTo(smtp, 'limited@example.com')).toHaveLength(3);
    },
  );

  it.skipIf(skip)(
    "a stranger's forgot requests for the address cannot use up the refusal's mail: it has a counter of the account's own",
    async () => {
      const stranger = browser(service);
      // Past the per-address forgot limit (3 here): forgot itself is refused now.
      let last = 0;
      for (let i = 0; i < 5; i += 1) {
        last = (
          await post(stranger, '/api/account/password/forgot', {
            email: 'flooded@example.com',
          })
        ).status;
      }
      expect(last).toBe(429);
      const before = smtp.received.length;
      const refused = await signInUrl(browser(service), 'flooded@example.com', password);
      expect(refused.url.searchParams.get('code')).toBe('email_unverified');
      await smtp.mailTo('flooded@example.com', before, /Confirm/);
    },
  );

  it.skipIf(skip)(
    'a browser: the form post lands on the sign-in page, which explains it in words',
    async () => {
      const client = browser(service);
      await service.cli(
        ['users', 'add', '--email', 'form@example.com', '--password-stdin'],
        password,
      );
      const page = await (await client.get('/api/auth/signin')).text();
      const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(page)?.[1] ?? '';
      const posted = await client.postForm(
        '/api/auth/callback/credentials',
        { csrfToken, email: 'form@example.com', password },
        { origin: service.url, 'sec-fetch-site': 'same-origin', accept: 'text/html' },
      );
      expect(posted.status).toBe(302);
      const location = new URL(posted.headers.get('location') ?? '');
      expect(location.searchParams.get('code')).toBe('email_unverified');
      const refusal = await (await client.get(`${location.pathname}${location.search}`)).text();
      expect(refusal).toContain(
        'Confirm your address first: we have sent a new link to form@example.com.',
      );
      expect(client.sessionCookie()).toBeUndefined();
    },
  );

  it.skipIf(skip)(
    'a sign-up under it: no account until confirmed, then a verified one that signs in at once',
    async () => {
      await signUp(browser(service), { email: 'fresh@example.com', name: 'Fresh', password });
      const mail = await smtp.mailTo('fresh@example.com', 0, /Confirm/);
      const refused = await signInUrl(browser(service), 'fresh@example.com', password);
      expect(refused.url.searchParams.get('code')).toBe('credentials');
      const { token } = signupSecretsOf(mail);
      expect(await confirm(browser(service), { token, password })).toBe('200');
      expect((await browser(service).signIn('fresh@example.com', password)).status).toBe(200);
    },
  );
});
