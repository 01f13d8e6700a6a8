import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { hasPostgres } from '../helpers/postgres.js';
import { startIdentityProvider, type IdentityProvider } from '../helpers/oidc-idp.js';
import { startMailService, type MailService } from './account-service.js';

/*
 * The third proof of an account an identity is offered to: a code mailed to its address,
 * asked for on the sign-in page in the offer's browser (adoption spec §1). Real mail, through a
 * loopback SMTP server; a real OpenID Connect provider.
 */

const clientId = 'gatehouse-mailed-code';
const clientSecret = 'mailed-code-client-secret-0123456789';

describe.each([
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
])('an offered identity proven by a mailed code on $name', ({ backend, skip }) => {
  let idp: IdentityProvider;
  let mailed: MailService;

  beforeAll(async () => {
    if (skip) return;
    idp = await startIdentityProvider();
    mailed = await startMailService({
      backend,
      users: ['mia@example.com'],
      env: {
        AUTH_OIDC_ISSUER: idp.issuer,
        AUTH_OIDC_ID: clientId,
        AUTH_OIDC_SECRET: clientSecret,
        AUTH_OIDC_NAME: 'Acme SSO',
      },
    });
    idp.setClients([
      {
        clientId,
        clientSecret,
        redirectUris: [`${mailed.service.url}/api/auth/callback/oidc`],
      },
    ]);
  });
  afterAll(async () => {
    await mailed?.close();
    await idp?.close();
  });

  const page = async (browser: Client, location: string) => {
    const url = new URL(location, mailed.service.url);
    return (await browser.get(`${url.pathname}${url.search}`)).text();
  };

  it.skipIf(skip)(
    'the page offers a code; a wrong one is refused, the right one links and signs in; it works once',
    async () => {
      const browser = new Client(mailed.service.url);
      idp.login({ sub: 'mia-at-acme', email: 'mia@example.com', emailVerified: true });
      const start = await browser.postForm('/api/auth/signin/oidc', {
        csrfToken: await browser.csrfToken(),
        callbackUrl: '/',
      });
      const back = new URL(await idp.followAuthorization(start.headers.get('location') ?? ''));
      const landed = await browser.get(`${back.pathname}${back.search}`);
      const offered = landed.headers.get('location') ?? '';
      expect(offered).toContain('error=OAuthAccountNotLinked');
      expect(await page(browser, offered)).toContain('Email me a code instead');

      const since = mailed.smtp.received.length;
      const send = await browser.postForm('/api/auth/callback/identity-offer', {
        csrfToken: await browser.csrfToken(),
        action: 'send',
      });
      const sent = send.headers.get('location') ?? '';
      expect(sent).toContain('error=CredentialsSignin&code=identity_code_sent');
      const asking = await page(browser, sent);
      expect(asking).toContain('We mailed a code');
      expect(asking).toContain('name="code"');
      const mail = await mailed.smtp.mailTo('mia@example.com', since, /link Acme SSO/);
      const code = /Your code: ([A-Z0-9]{8})/.exec(mail.parsed.text ?? '')?.[1] ?? '';
      expect(code).toMatch(/^[A-Z0-9]{8}$/);

      const confirm = (typed: string) =>
        browser.csrfToken().then((csrfToken) =>
          browser.postForm('/api/auth/callback/identity-offer', {
            csrfToken,
            action: 'confirm',
            code: typed,
          }),
        );
      const wrong = await confirm('AAAAAAAA');
      expect(wrong.headers.get('location')).toContain('code=identity_code_invalid');
      expect(await browser.session()).toBeNull();
      const right = await confirm(code);
      expect(right.status).toBe(302);
      expect(right.headers.get('location')).toBe(`${mailed.service.url}/`);
      expect(((await browser.session()) as { user: { email: string } }).user.email).toBe(
        'mia@example.com',
      );
      const identities = (await (await browser.get('/api/account/identities')).json()) as {
        identities: { provider: string }[];
      };
      expect(identities.identities).toEqual([expect.objectContaining({ provider: 'oidc' })]);

      // The code and the offer are spent: a second browser holding nothing gets nowhere.
      const again = await confirm(code);
      expect(again.headers.get('location')).toContain('code=identity_offer_expired');
      const stranger = new Client(mailed.service.url);
      const theirs = await stranger.postForm('/api/auth/callback/identity-offer', {
        csrfToken: await stranger.csrfToken(),
        action: 'send',
      });
      expect(theirs.headers.get('location')).toContain('code=identity_offer_expired');

      // The owner is told, with the "this wasn't me" link; the lock takes the link back.
      const notice = await mailed.smtp.mailTo(
        'mia@example.com',
        since,
        /Sign-in with Acme SSO was added/,
      );
      const lockToken = /\/account\/lock\?token=([\w-]+)/.exec(notice.parsed.text ?? '')?.[1] ?? '';
      const locked = await postWithCsrf(new Client(mailed.service.url), '/api/account/lock', {
        token: lockToken,
      });
      expect(locked.status).toBe(200);
      idp.login({ sub: 'mia-at-acme', email: 'mia@example.com', emailVerified: true });
      const after = new Client(mailed.service.url);
      const retry = await after.postForm('/api/auth/signin/oidc', {
        csrfToken: await after.csrfToken(),
        callbackUrl: '/',
      });
      const back2 = new URL(await idp.followAuthorization(retry.headers.get('location') ?? ''));
      const answer = await after.get(`${back2.pathname}${back2.search}`);
      // Unlinked: an offer again (not "this account is disabled", which a linked one would get).
      expect(answer.headers.get('location')).toContain('error=OAuthAccountNotLinked');
    },
  );
});
