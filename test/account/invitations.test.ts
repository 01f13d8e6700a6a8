import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode } from '../helpers/account-requests.js';
import { databaseBackends } from '../helpers/backends.js';
import { scanEveryLink } from '../helpers/mail-reading.js';
import type { LoopbackSmtp } from '../helpers/smtp.js';
import { startService, type MailService, type OwnService } from './account-service.js';
import {
  accept,
  browser,
  hiddenField,
  invitationLinkOf,
  pathOf,
  printedLink,
  startInviteMailService,
  startInviteService,
  tokenOf,
  type InviteService,
} from './invitation-helpers.js';

/*
 * Accepting an invitation (issue 19 items 4 and 6) over real HTTP against the service in process
 *, the invitations made by the real CLI: single use, expiry, an address
 * taken meanwhile, a weak password, no session made, sign-in after; the page as a browser
 * without script uses it; a mail scanner opening the link first. SQLite, and PostgreSQL under
 * scripts/with-postgres.sh.
 */

const password = 'correct horse battery staple';

const backends = databaseBackends('invitations');

describe.each(backends)('accepting an invitation on $name', ({ dialect: backend, skip }) => {
  let mailed: MailService<InviteService>;
  let service: InviteService;
  let smtp: LoopbackSmtp;

  beforeAll(async () => {
    if (skip) return;
    mailed = await startInviteMailService({
      backend,
      env: {
        MAIL_RETRY_SECONDS: '1',
        // Low, so the last test reaches the per-address limit with junk tokens.
        THROTTLE_IP_MAX_FAILURES: '12',
      },
    });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  const invitedLink = async (email: string, args: string[] = [], env?: Record<string, string>) => {
    const invited = await service.invite(['--email', email, '--print-link', ...args], env);
    expect(invited.stderr).toBe('');
    expect(invited.code).toBe(0);
    return printedLink(invited.stdout);
  };

  it.skipIf(skip)(
    'the mailed link: a scanner opens it first, the person accepts, no session is made, sign-in works, the address is verified',
    async () => {
      const before = smtp.received.length;
      const invited = await service.invite(['--email', 'Ada@Example.com', '--name', 'Ada L.']);
      expect(invited.code).toBe(0);
      const mail = await smtp.mailTo('ada@example.com', before, /invited/);
      const link = invitationLinkOf(mail);
      expect(link.startsWith(`${service.url}/account/invitation?token=`)).toBe(true);
      expect(mail.parsed.text).toContain('Hello Ada L.');
      expect(mail.parsed.text).toMatch(/expires in 7 days/);
      expect(`${invited.stdout}${invited.stderr}`).not.toContain(tokenOf(link));
      // A mail scanner opens every link in every mail: the invitation is not spent.
      expect(await scanEveryLink(smtp)).toBeGreaterThan(0);
      const page = await browser(service).get(pathOf(link));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('ada@example.com');

      const person = browser(service);
      const done = await accept(person, { token: tokenOf(link), password });
      expect(done.status).toBe(200);
      expect(await done.json()).toEqual({ status: 'accepted' });
      expect(done.headers.get('cache-control')).toBe('no-store');
      expect(done.headers.getSetCookie().some((c) => /session-token=[^;]/.test(c))).toBe(false);
      expect(person.sessionCookie()).toBeUndefined();
      expect(await person.session()).toBeNull();

      const signedIn = browser(service);
      expect((await signedIn.signIn('ada@example.com', password)).status).toBe(200);
      expect(signedIn.sessionCookie()).toBeDefined();
      const account = (await (await signedIn.get('/api/account')).json()) as {
        user: { email: string; name: string; emailVerified: boolean };
      };
      expect(account.user).toMatchObject({
        email: 'ada@example.com',
        name: 'Ada L.',
        emailVerified: true,
      });
      // The sign-in's event is written just after its answer (with its audit entry): wait for it.
      let events: { events: { type: string; device: string }[] };
      // A deadline, not a count of tries: a loaded machine may take seconds.
      for (const deadline = Date.now() + 20_000; ;) {
        events = (await (await signedIn.get('/api/account/events')).json()) as typeof events;
        if (events.events.length >= 2 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(events.events.map((e) => e.type)).toEqual(['signin', 'account_created']);
      expect(events.events[1]?.device).toBe('InviteTest/1.0 (X11; Linux x86_64)');
    },
    60_000,
  );

  it.skipIf(skip)('an invitation works once: the second use is 400 invalid_token', async () => {
    const link = await invitedLink('bob@example.com');
    expect((await accept(browser(service), { token: tokenOf(link), password })).status).toBe(200);
    expect(
      await errorCode(await accept(browser(service), { token: tokenOf(link), password })),
    ).toBe('400 invalid_token');
    // The used link's page says so, and what to do.
    const page = await browser(service).get(pathOf(link));
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('ask the person who invited you');
  });

  it.skipIf(skip)('two accepts of one invitation at once: exactly one account', async () => {
    const link = await invitedLink('par@example.com');
    const answers = await Promise.all(
      ['first passphrase here', 'second passphrase here'].map((chosen) =>
        accept(browser(service), { token: tokenOf(link), password: chosen }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    const winner = answers[0]?.status === 200 ? 'first passphrase here' : 'second passphrase here';
    const client = browser(service);
    await client.signIn('par@example.com', winner);
    expect(client.sessionCookie()).toBeDefined();
  });

  it.skipIf(skip)('the name in the form wins over the invitation’s', async () => {
    const link = await invitedLink('cy@example.com', ['--name', 'Cy Operator-Typed']);
    const done = await accept(browser(service), { token: tokenOf(link), password, name: ' Cy ' });
    expect(done.status).toBe(200);
    const client = browser(service);
    await client.signIn('cy@example.com', password);
    const account = (await (await client.get('/api/account')).json()) as { user: { name: string } };
    expect(account.user.name).toBe('Cy');
  });

  it.skipIf(skip)(
    'after INVITE_TTL the link is 400 invalid_token and its page says so',
    async () => {
      const link = await invitedLink('dee@example.com', [], { INVITE_TTL: '1' });
      await sleep(1_100);
      expect(
        await errorCode(await accept(browser(service), { token: tokenOf(link), password })),
      ).toBe('400 invalid_token');
      const page = await browser(service).get(pathOf(link));
      expect(page.status).toBe(400);
      expect(await page.text()).toContain('cannot be used');
    },
  );

  it.skipIf(skip)(
    'an address that got an account meanwhile: 400 invalid_token, the account untouched',
    async () => {
      const link = await invitedLink('eve@example.com');
      await service.addUser('eve@example.com', 'the operator chose this one');
      expect(
        await errorCode(await accept(browser(service), { token: tokenOf(link), password })),
      ).toBe('400 invalid_token');
      const owner = browser(service);
      await owner.signIn('eve@example.com', 'the operator chose this one');
      expect(owner.sessionCookie()).toBeDefined();
      // The address free again (the account removed): the old link stays spent.
      const removed = await service.cli(['users', 'remove', '--email', 'eve@example.com']);
      expect(removed.code).toBe(0);
      expect(
        await errorCode(await accept(browser(service), { token: tokenOf(link), password })),
      ).toBe('400 invalid_token');
    },
  );

  it.skipIf(skip)('a weak password is 422 weak_password and keeps the invitation', async () => {
    const link = await invitedLink('fay@example.com');
    const weak = await accept(browser(service), { token: tokenOf(link), password: 'short' });
    expect(weak.status).toBe(422);
    expect(((await weak.json()) as { error: { code: string; message: string } }).error).toEqual({
      code: 'weak_password',
      message: expect.stringMatching(/at least 12 characters/),
    });
    expect(
      await errorCode(
        await accept(browser(service), { token: tokenOf(link), password: 'password1234567' }),
      ),
    ).toBe('422 weak_password');
    expect((await accept(browser(service), { token: tokenOf(link), password })).status).toBe(200);
  });

  it.skipIf(skip)(
    'bad input is a clear 4xx: a missing field, a control character in the name, no CSRF',
    async () => {
      const link = await invitedLink('gus@example.com');
      expect(await errorCode(await accept(browser(service), { password }))).toBe(
        '422 invalid_field',
      );
      expect(
        await errorCode(
          await accept(browser(service), { token: tokenOf(link), password, name: 'a\u0007b' }),
        ),
      ).toBe('422 invalid_field');
      const noCsrf = await fetch(`${service.url}/api/account/invitation/accept`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: tokenOf(link), password }),
      });
      expect(await errorCode(noCsrf)).toBe('403 csrf');
      // None of it spent the invitation.
      expect((await accept(browser(service), { token: tokenOf(link), password })).status).toBe(200);
    },
  );

  it.skipIf(skip)('re-inviting voids the earlier link: only the newest works', async () => {
    const first = await invitedLink('hal@example.com');
    const again = await service.invite(['--email', 'hal@example.com', '--print-link']);
    expect(again.stdout).toContain('1 earlier invitation of hal@example.com no longer works');
    const second = printedLink(again.stdout);
    expect(
      await errorCode(await accept(browser(service), { token: tokenOf(first), password })),
    ).toBe('400 invalid_token');
    expect((await accept(browser(service), { token: tokenOf(second), password })).status).toBe(200);
  });

  it.skipIf(skip)(
    'guessed tokens are throttled per address: 429 with Retry-After, the page too',
    async () => {
      const guesser = browser(service);
      let last: Response | undefined;
      for (let i = 0; i < 13; i += 1) {
        last = await accept(guesser, { token: `guess-${i}-${'x'.repeat(40)}`, password });
        if (last.status === 429) break;
        expect(await errorCode(last)).toBe('400 invalid_token');
      }
      expect(last?.status).toBe(429);
      expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
      const page = await guesser.get('/account/invitation?token=another-guess');
      expect(page.status).toBe(429);
      expect(await page.text()).toContain('Too many attempts');
    },
  );
});

describe('the invitation page, as a plain form (SQLite)', () => {
  let mailed: MailService<InviteService>;
  let service: InviteService;
  let smtp: LoopbackSmtp;

  beforeAll(async () => {
    mailed = await startInviteMailService({ env: { PAGE_PRODUCT_NAME: 'Acme Portal' } });
    ({ service, smtp } = mailed);
  }, 60_000);
  afterAll(async () => {
    await mailed?.close();
  });

  it('GET uses nothing and shows the address and name; a weak password keeps the form; the post creates the account', async () => {
    const invited = await service.invite(['--email', 'page@example.com', '--name', 'Pat <Page>']);
    expect(invited.code).toBe(0);
    const link = invitationLinkOf(
      await smtp.mailTo('page@example.com', 0, /invited to Acme Portal/),
    );
    const person = browser(service);
    const page = await person.get(pathOf(link));
    expect(page.status).toBe(200);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain("You're invited to Acme Portal as <strong>page@example.com</strong>");
    expect(html).toContain('value="Pat &lt;Page&gt;"');
    expect(html).not.toContain('<script');
    expect(html).toContain(
      '<input type="email" name="username" autocomplete="username" value="page@example.com" hidden>',
    );
    expect(html).toContain('<input id="passwordRepeat" name="passwordRepeat" type="password"');
    // Opening it twice more spends nothing.
    expect((await person.get(pathOf(link))).status).toBe(200);

    const form = (fields: Record<string, string>, csrfFrom: string) =>
      person.postForm(
        '/account/invitation',
        { csrfToken: hiddenField(csrfFrom, 'csrfToken'), token: tokenOf(link), ...fields },
        // Under no-referrer a browser posts with Origin: null (and Sec-Fetch-Site: same-origin).
        { origin: 'null', 'sec-fetch-site': 'same-origin' },
      );
    const differ = await form({ name: 'Pat', password, passwordRepeat: `${password}!` }, html);
    expect(differ.status).toBe(422);
    expect(await differ.text()).toMatch(/<input id="passwordRepeat" [^>]*aria-invalid="true"/);
    const weak = await form({ name: 'Pat', password: 'short', passwordRepeat: 'short' }, html);
    expect(weak.status).toBe(422);
    const weakHtml = await weak.text();
    expect(weakHtml).toContain('<title>Error: Create your account – Acme Portal</title>');
    expect(weakHtml).toContain('aria-invalid="true"');
    expect(weakHtml).toContain('value="Pat"');
    const done = await form({ name: 'Pat', password, passwordRepeat: password }, weakHtml);
    expect(done.status).toBe(200);
    const doneHtml = await done.text();
    expect(doneHtml).toContain('Account created — sign in');
    expect(doneHtml).toContain('Sign in as <strong>page@example.com</strong>');
    expect(person.sessionCookie()).toBeUndefined();

    // The same link again: the page explains, without a form.
    const spent = await form({ name: 'Pat', password }, weakHtml);
    expect(spent.status).toBe(400);
    const spentHtml = await spent.text();
    expect(spentHtml).toContain('This invitation cannot be used');
    expect(spentHtml).not.toContain('name="password"');

    // A foreign site's post is refused.
    const foreign = await person.postForm(
      '/account/invitation',
      { csrfToken: hiddenField(weakHtml, 'csrfToken'), token: tokenOf(link), password },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
    );
    expect(foreign.status).toBe(403);

    const signedIn = browser(service);
    await signedIn.signIn('page@example.com', password);
    expect(signedIn.sessionCookie()).toBeDefined();
  });

  it('a link cut short or unknown gets the page that says what to do', async () => {
    for (const path of ['/account/invitation', '/account/invitation?token=nope']) {
      const page = await browser(service).get(path);
      expect(page.status).toBe(400);
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await page.text();
      expect(html).toContain('This invitation cannot be used');
      expect(html).toContain('ask the person who invited you to send a new invitation');
    }
  });
});

describe('with mail off (production without SMTP_URL)', () => {
  let own: OwnService<InviteService>;
  let service: InviteService;

  beforeAll(async () => {
    own = await startService({ start: startInviteService, env: { NODE_ENV: 'production' } });
    ({ service } = own);
  }, 60_000);
  afterAll(async () => {
    await own?.close();
  });

  it('the reset routes are 404 but --print-link and the accept route and page work', async () => {
    expect(
      (await fetch(`${service.url}/api/account/password/forgot`, { method: 'POST' })).status,
    ).toBe(404);
    const mailed = await service.invite(['--email', 'off@example.com']);
    expect(mailed.code).toBe(1);
    expect(mailed.stderr).toContain('set SMTP_URL');
    expect(mailed.stderr).toContain('--print-link');
    const printed = await service.invite(['--email', 'off@example.com', '--print-link']);
    expect(printed.code).toBe(0);
    const link = printedLink(printed.stdout);
    expect((await browser(service).get(pathOf(link))).status).toBe(200);
    expect((await accept(browser(service), { token: tokenOf(link), password })).status).toBe(200);
    const client = browser(service);
    await client.signIn('off@example.com', password);
    expect(client.sessionCookie()).toBeDefined();
  });
});
