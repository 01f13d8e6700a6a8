import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/*
 * A real OpenID Connect provider on loopback (panva's `oidc-provider`, the certified one), for
 * the identity-provider sign-in tests: codes, PKCE, ID tokens, userinfo and RFC 9207 `iss` as
 * the library does them, never a mock of the protocol. Only its login screen is replaced: the
 * test says who the next sign-in is (`login`), and consent is given at once, so a plain HTTP
 * client with a cookie jar (`followAuthorization`) goes from the authorize URL back to the
 * relying party. A fault in front of it stands for a provider that is slow, down or broken.
 */

export interface IdpAccount {
  sub: string;
  email?: string;
  emailVerified?: boolean;
  name?: string;
}

export type IdpFault = 'none' | 'slow' | 'down' | 'huge-token' | 'malformed-token';

export interface IdentityProvider {
  issuer: string;
  /** The clients it knows, from now on (a client's callback is known once its server listens). */
  setClients(clients: IdpClient[]): void;
  /** Who the next authorization signs in as. */
  login(account: IdpAccount): void;
  /** What the provider does from now on. */
  setFault(fault: IdpFault, slowMs?: number): void;
  /** Follows an authorization URL as a browser would; the redirect back to the client. */
  followAuthorization(authorizeUrl: string): Promise<string>;
  close(): Promise<void>;
}

export interface IdpClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

/** A cookie jar for one origin, as much of one as the provider's own cookies need. */
function cookieJar() {
  const cookies = new Map<string, string>();
  return {
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    take(response: Response) {
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = (pair ?? '').indexOf('=');
        if (at > 0) cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
      }
    },
  };
}

export async function startIdentityProvider(): Promise<IdentityProvider> {
  const accounts = new Map<string, IdpAccount>();
  let next: IdpAccount | undefined;
  let fault: IdpFault = 'none';
  let slowMs = 0;
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const build = (clients: IdpClient[]) =>
    new Provider(issuer, {
      clients: clients.map((client) => ({
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: client.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
      })),
      pkce: { required: () => true },
      features: { devInteractions: { enabled: false } },
      interactions: {
        url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      // Quiet, and short-lived as a test's artifacts are.
      ttl: {
        Interaction: 300,
        Session: 600,
        Grant: 600,
        AccessToken: 300,
        IdToken: 300,
        AuthorizationCode: 60,
      },
      jwks: { keys: [privateKey.export({ format: 'jwk' }) as Record<string, unknown>] },
      cookies: { keys: [randomBytes(16).toString('hex')] },
      findAccount: (_ctx: unknown, sub: string) => {
        const account = accounts.get(sub);
        if (account === undefined) return undefined;
        return {
          accountId: sub,
          claims: () => ({
            sub,
            ...(account.email !== undefined && {
              email: account.email,
              email_verified: account.emailVerified ?? false,
            }),
            ...(account.name !== undefined && { name: account.name }),
          }),
        };
      },
    });
  let provider: Provider | undefined;
  let callback: ReturnType<Provider['callback']> | undefined;

  async function interaction(
    provider: Provider,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ) {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      const account = next ?? { sub: 'nobody' };
      accounts.set(account.sub, account);
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account.sub } },
        {
          mergeWithLastSubmission: false,
        },
      );
      return;
    }
    const grant = new provider.Grant({
      accountId: details.session?.accountId ?? '',
      clientId: String(details.params.client_id),
    });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { consent: { grantId } },
      {
        mergeWithLastSubmission: true,
      },
    );
  }

  server.on('request', (req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (fault === 'down') {
        req.socket.destroy();
        return;
      }
      if (fault === 'slow') await new Promise((resolve) => setTimeout(resolve, slowMs));
      if (fault === 'malformed-token' && path === '/token') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":');
        return;
      }
      if (fault === 'huge-token' && path === '/token') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ sub: 'x', padding: 'x'.repeat(5 * 1024 * 1024) }));
        return;
      }
      if (provider === undefined || callback === undefined) {
        res.writeHead(503).end('no clients yet');
        return;
      }
      if (path.startsWith('/interaction/')) {
        await interaction(provider, req, res);
        return;
      }
      callback(req, res);
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });

  return {
    issuer,
    setClients(clients) {
      provider = build(clients);
      callback = provider.callback();
    },
    login(account) {
      next = account;
    },
    setFault(newFault, ms = 0) {
      fault = newFault;
      slowMs = ms;
    },
    async followAuthorization(authorizeUrl) {
      const jar = cookieJar();
      let url = authorizeUrl;
      for (let hop = 0; hop < 10; hop += 1) {
        if (!url.startsWith(issuer)) return url;
        const response = await fetch(url, {
          redirect: 'manual',
          headers: { cookie: jar.header() },
        });
        jar.take(response);
        const location = response.headers.get('location');
        if (location === null)
          throw new Error(`the provider answered ${response.status}: ${await response.text()}`);
        url = new URL(location, url).toString();
      }
      throw new Error('too many redirects at the provider');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
