import type { AppConfig } from '../../src/app.js';
import type { Client } from './client.js';
import { startIdentityProvider, type IdentityProvider } from './oidc-idp.js';
import { startServer, type TestServer, type TestServerOptions } from './server.js';

/*
 * The service with one OpenID Connect provider (`oidc`, "Acme SSO") configured, and that
 * provider, a real one on loopback, knowing the service's callback: what the identity suites
 * start. `otherClients` registers more clients at the provider with the same callback (a code
 * issued to one of them must not sign in here).
 */

export const providerClient = {
  id: 'gatehouse-test',
  secret: 'a-long-client-secret-for-the-tests',
};

export interface ProviderService {
  idp: IdentityProvider;
  server: TestServer;
  close(): Promise<void>;
}

export async function startProviderService(
  options: {
    databaseUrl?: string;
    signup?: 'open' | 'closed';
    config?: Partial<AppConfig>;
    throttle?: TestServerOptions['throttle'];
    otherClients?: readonly string[];
  } = {},
): Promise<ProviderService> {
  const idp = await startIdentityProvider();
  const server = await startServer({
    ...(options.databaseUrl !== undefined && { databaseUrl: options.databaseUrl }),
    ...(options.throttle !== undefined && { throttle: options.throttle }),
    config: {
      identityProviders: [
        {
          id: 'oidc',
          name: 'Acme SSO',
          clientId: providerClient.id,
          clientSecret: providerClient.secret,
          issuer: idp.issuer,
          signup: options.signup,
        },
      ],
      ...options.config,
    },
  });
  const redirectUris = [`${server.url}/api/auth/callback/oidc`];
  idp.setClients([
    { clientId: providerClient.id, clientSecret: providerClient.secret, redirectUris },
    ...(options.otherClients ?? []).map((clientId) => ({
      clientId,
      clientSecret: `${clientId}-secret-0123456789`,
      redirectUris,
    })),
  ]);
  return {
    idp,
    server,
    close: async () => {
      await server.close();
      await idp.close();
    },
  };
}

/**
 * A sign-in with the provider as a browser makes it: Auth.js's post (with `intent=link` from
 * the account page), the provider, and the callback's answer, not followed.
 */
export async function viaProvider(browser: Client, idp: IdentityProvider, intent?: 'link') {
  const csrfToken = await browser.csrfToken();
  const fields = { csrfToken, callbackUrl: '/', ...(intent !== undefined && { intent }) };
  const start = await browser.postForm('/api/auth/signin/oidc', fields);
  if (start.status !== 302) throw new Error(`signin/oidc answered ${start.status}`);
  const back = new URL(await idp.followAuthorization(start.headers.get('location') ?? ''));
  const landed = await browser.get(`${back.pathname}${back.search}`);
  return { landed, location: landed.headers.get('location') ?? '', back };
}

/** Whom the browser's session signs in, by address; undefined: nobody. */
export async function signedInAs(browser: Client): Promise<string | undefined> {
  const session = (await browser.session()) as { user?: { email: string } } | null;
  return session?.user?.email;
}
