import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { databaseBackends } from '../helpers/backends.js';
import {
  signedInAs,
  startProviderService,
  viaProvider,
  type ProviderService,
} from '../helpers/provider-service.js';
import { addUser } from '../helpers/server.js';

/*
 * Sign-in with an OpenID Connect provider through Auth.js's own wire (`signin/oidc`,
 * `callback/oidc`), against a real provider on loopback (test/helpers/oidc-idp.ts): a known
 * identity signs in, an address alone never links, a proof of the account does.
 */

const password = 'correct horse battery staple';

/** The page a refusal's redirect leads to, as the browser shows it. */
async function pageAt(browser: Client, location: string): Promise<string> {
  const url = new URL(location);
  return (await browser.get(`${url.pathname}${url.search}`)).text();
}

describe.each(databaseBackends('identities'))('sign-in with OpenID Connect on $name', (backend) => {
  let service: ProviderService;
  let dispose = async () => undefined as void;

  beforeAll(async () => {
    if (backend.skip) return;
    const created = await backend.create();
    dispose = created.dispose;
    service = await startProviderService({
      databaseUrl: created.url,
      config: { identityProviderTimeoutSeconds: 2 },
    });
  });
  afterAll(async () => {
    await service?.close();
    await dispose();
  });

  it.skipIf(backend.skip)('lists the provider as Auth.js does', async () => {
    const { server } = service;
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
      const { server, idp } = service;
      await addUser(server, 'ada@example.com', password, 'Ada');
      idp.login({ sub: 'ada-at-idp', email: 'ada@example.com', emailVerified: true, name: 'Ada' });
      const browser = new Client(server.url);
      const { landed, location } = await viaProvider(browser, idp);
      expect(landed.status).toBe(302);
      expect(location).toContain('/api/auth/signin?error=OAuthAccountNotLinked');
      expect(await signedInAs(browser)).toBeUndefined();
      // The page says what to do.
      expect(await pageAt(browser, location)).toContain('Sign in to it below once');
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
      const again = await viaProvider(other, idp);
      expect(again.landed.status).toBe(302);
      expect(again.location).toBe(`${server.url}/`);
      expect(await signedInAs(other)).toBe('ada@example.com');
    },
  );

  it.skipIf(backend.skip)('an address the provider does not vouch for never links', async () => {
    const { server, idp } = service;
    await addUser(server, 'grace@example.com', password, 'Grace');
    idp.login({ sub: 'mallory', email: 'grace@example.com', emailVerified: false });
    const browser = new Client(server.url);
    const { location } = await viaProvider(browser, idp);
    expect(location).toContain('error=AccessDenied&code=identity_address_unverified');
    expect(await signedInAs(browser)).toBeUndefined();
    await browser.signIn('grace@example.com', password);
    const identities = (await (await browser.get('/api/account/identities')).json()) as {
      identities: unknown[];
    };
    expect(identities.identities).toEqual([]);
  });
});

describe('sign-in with OpenID Connect when the store does not answer', () => {
  it('the callback answers 503, the store’s answer: never a refusal, a 500 or a session', async () => {
    const { server, idp } = await startProviderService({ signup: 'open' });
    try {
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
    const service = await startProviderService({
      signup: 'open',
      config: { secondFactor: { mode: 'required', keys: [] } },
    });
    try {
      service.idp.login({ sub: 'required-1', email: 'req@example.com', emailVerified: true });
      const browser = new Client(service.server.url);
      // Mail is off here: the enrolment asks for an operator's code, as after a password.
      const { location } = await viaProvider(browser, service.idp);
      expect(location).toContain('error=CredentialsSignin&code=enrolment_code_required');
      expect(await signedInAs(browser)).toBeUndefined();
      // The enrolment step is the password's own: its challenge is held, its page shows the key.
      expect(await pageAt(browser, location)).toContain('name="otp"');
    } finally {
      await service.close();
    }
  });
});

describe('sign-in with OpenID Connect counts as a sign-in attempt', () => {
  it('against the address’s rate, successes too: past it the callback answers rate_limited, no session', async () => {
    const service = await startProviderService({ signup: 'open', throttle: { ipMaxAttempts: 3 } });
    try {
      service.idp.login({ sub: 'counted', email: 'counted@example.com', emailVerified: true });
      for (let i = 0; i < 3; i += 1) {
        const browser = new Client(service.server.url);
        expect((await viaProvider(browser, service.idp)).location).toBe(`${service.server.url}/`);
      }
      const fourth = new Client(service.server.url);
      const { location } = await viaProvider(fourth, service.idp);
      expect(location).toContain('error=CredentialsSignin&code=rate_limited');
      expect(await signedInAs(fourth)).toBeUndefined();
    } finally {
      await service.close();
    }
  });
});
