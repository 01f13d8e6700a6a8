import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { databaseBackends } from '../helpers/backends.js';
import { startIdentityProvider, type IdentityProvider } from '../helpers/oidc-idp.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import type { AppConfig } from '../../src/app.js';

/*
 * Sign-in with an OpenID Connect provider through Auth.js's own wire (`signin/oidc`,
 * `callback/oidc`), against a real provider on loopback (test/helpers/oidc-idp.ts): a known
 * identity signs in, an address alone never links, a proof of the account does.
 */

const password = 'correct horse battery staple';
const clientId = 'gatehouse-test';
const clientSecret = 'a-long-client-secret-for-the-tests';

/** Where a sign-in with the provider ends, as a browser would see it: our callback's answer. */
async function signInWithProvider(browser: Client, idp: IdentityProvider, callbackUrl = '/') {
  const csrfToken = await browser.csrfToken();
  const start = await browser.postForm('/api/auth/signin/oidc', { csrfToken, callbackUrl });
  expect(start.status).toBe(302);
  const authorize = start.headers.get('location') ?? '';
  expect(authorize.startsWith(idp.issuer)).toBe(true);
  const back = await idp.followAuthorization(authorize);
  const url = new URL(back);
  return browser.get(`${url.pathname}${url.search}`);
}

async function sessionOf(browser: Client) {
  return (await browser.session()) as { user?: { email: string } } | null;
}

describe.each(databaseBackends('identities'))('sign-in with OpenID Connect on $name', (backend) => {
  let idp: IdentityProvider;
  let server: TestServer;
  let dispose = async () => undefined as void;

  beforeAll(async () => {
    if (backend.skip) return;
    const created = await backend.create();
    dispose = created.dispose;
    idp = await startIdentityProvider();
    const config: Partial<AppConfig> = {
      identityProviders: [
        {
          id: 'oidc',
          name: 'Acme SSO',
          clientId,
          clientSecret,
          issuer: idp.issuer,
          signup: undefined,
        },
      ],
      identityProviderTimeoutSeconds: 2,
    };
    server = await startServer({ databaseUrl: created.url, config });
    idp.setClients([
      { clientId, clientSecret, redirectUris: [`${server.url}/api/auth/callback/oidc`] },
    ]);
  });
  afterAll(async () => {
    await server?.close();
    await idp?.close();
    await dispose();
  });

  it.skipIf(backend.skip)('lists the provider as Auth.js does', async () => {
    const providers = (await (await fetch(`${server.url}/api/auth/providers`)).json()) as Record<
      string,
      { id: string; name: string; type: string; signinUrl: string; callbackUrl: string }
    >;
    expect(providers.oidc).toMatchObject({
      id: 'oidc',
      name: 'Acme SSO',
      type: 'oidc',
      signinUrl: `${server.url}/api/auth/signin/oidc`,
      callbackUrl: `${server.url}/api/auth/callback/oidc`,
    });
  });

  it.skipIf(backend.skip)(
    'an unknown identity with an account’s verified address gets no session until the account is proven, then is linked',
    async () => {
      await addUser(server, 'ada@example.com', password, 'Ada');
      idp.login({ sub: 'ada-at-idp', email: 'ada@example.com', emailVerified: true, name: 'Ada' });
      const browser = new Client(server.url);
      const landed = await signInWithProvider(browser, idp);
      expect(landed.status).toBe(302);
      expect(landed.headers.get('location')).toContain(
        '/api/auth/signin?error=OAuthAccountNotLinked',
      );
      expect(await sessionOf(browser)).toBeNull();
      // The page says what to do.
      const page = await browser.get(
        new URL(landed.headers.get('location') ?? '').pathname +
          new URL(landed.headers.get('location') ?? '').search,
      );
      expect(await page.text()).toContain('Sign in to it below once');
      // The password proves the account in this browser: linked.
      const signedIn = await browser.signIn('ada@example.com', password);
      expect(signedIn.status).toBe(200);
      const identities = (await (await browser.get('/api/account/identities')).json()) as {
        identities: { provider: string; email: string }[];
      };
      expect(identities.identities).toEqual([
        expect.objectContaining({ provider: 'oidc', email: 'ada@example.com' }),
      ]);
      // Next time the provider alone signs Ada in.
      const other = new Client(server.url);
      idp.login({ sub: 'ada-at-idp', email: 'ada@example.com', emailVerified: true, name: 'Ada' });
      const again = await signInWithProvider(other, idp);
      expect(again.status).toBe(302);
      expect(again.headers.get('location')).toBe(`${server.url}/`);
      expect((await sessionOf(other))?.user?.email).toBe('ada@example.com');
    },
  );

  it.skipIf(backend.skip)('an address the provider does not vouch for never links', async () => {
    await addUser(server, 'grace@example.com', password, 'Grace');
    idp.login({ sub: 'mallory', email: 'grace@example.com', emailVerified: false });
    const browser = new Client(server.url);
    const landed = await signInWithProvider(browser, idp);
    expect(landed.headers.get('location')).toContain(
      'error=AccessDenied&code=identity_address_unverified',
    );
    expect(await sessionOf(browser)).toBeNull();
    await browser.signIn('grace@example.com', password);
    const identities = (await (await browser.get('/api/account/identities')).json()) as {
      identities: unknown[];
    };
    expect(identities.identities).toEqual([]);
  });
});

describe('sign-in with OpenID Connect when the store does not answer', () => {
  it('the callback answers 503, the store’s answer: never a refusal, a 500 or a session', async () => {
    const idp = await startIdentityProvider();
    const server = await startServer({
      config: {
        identityProviders: [
          {
            id: 'oidc',
            name: 'Acme SSO',
            clientId,
            clientSecret,
            issuer: idp.issuer,
            signup: 'open',
          },
        ],
      },
    });
    try {
      idp.setClients([
        { clientId, clientSecret, redirectUris: [`${server.url}/api/auth/callback/oidc`] },
      ]);
      idp.login({ sub: 'someone', email: 'someone@example.com', emailVerified: true });
      const browser = new Client(server.url);
      const csrfToken = await browser.csrfToken();
      const start = await browser.postForm('/api/auth/signin/oidc', {
        csrfToken,
        callbackUrl: '/',
      });
      const back = new URL(await idp.followAuthorization(start.headers.get('location') ?? ''));
      // The database goes away between the provider and the callback.
      await server.db.destroy();
      const landed = await browser.get(`${back.pathname}${back.search}`);
      expect(landed.status).toBe(503);
      expect(browser.sessionCookie()).toBeUndefined();
    } finally {
      await server.app.close();
      await server.services.hasher.close();
      await idp.close();
    }
  });
});

describe('sign-in with OpenID Connect under SECOND_FACTOR=required', () => {
  it('a new person signed up by the provider gets no session until an app is enrolled', async () => {
    const idp = await startIdentityProvider();
    const server = await startServer({
      config: {
        secondFactor: { mode: 'required', keys: [] },
        identityProviders: [
          {
            id: 'oidc',
            name: 'Acme SSO',
            clientId,
            clientSecret,
            issuer: idp.issuer,
            signup: 'open',
          },
        ],
      },
    });
    try {
      idp.setClients([
        { clientId, clientSecret, redirectUris: [`${server.url}/api/auth/callback/oidc`] },
      ]);
      idp.login({ sub: 'required-1', email: 'req@example.com', emailVerified: true });
      const browser = new Client(server.url);
      const landed = await signInWithProvider(browser, idp);
      // Mail is off here: the enrolment asks for an operator's code, as after a password.
      const location = landed.headers.get('location') ?? '';
      expect(location).toContain('error=CredentialsSignin&code=enrolment_code_required');
      expect(await sessionOf(browser)).toBeNull();
      // The enrolment step is the password's own: its challenge is held, its page shows the key.
      const page = await browser.get(new URL(location).pathname + new URL(location).search);
      expect(await page.text()).toContain('name="otp"');
    } finally {
      await server.close();
      await idp.close();
    }
  });
});
