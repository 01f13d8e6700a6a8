import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A stand-in for GitHub (Enterprise Server's URL layout) on loopback, for Auth.js's own GitHub
 * provider pointed at it (AUTH_GITHUB_ENTERPRISE_URL): the authorize redirect, the code
 * exchange (single use, bound to the client, the redirect URI and the PKCE challenge) and the
 * REST API's `/user` and `/user/emails`, as GitHub answers them. github.com cannot be reached
 * from the tests; its client lets the base URL be set, so this stands where it would be.
 */

export interface GitHubAccount {
  id: number;
  login: string;
  name?: string;
  /** The public profile's address, which GitHub does not say is verified. */
  email?: string | null;
  emails?: { email: string; primary: boolean; verified: boolean }[];
}

export interface GitHubStandIn {
  baseUrl: string;
  login(account: GitHubAccount): void;
  followAuthorization(authorizeUrl: string): Promise<string>;
  close(): Promise<void>;
}

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  account: GitHubAccount;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function bodyOf(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return (req.headers['content-type'] ?? '').includes('json')
    ? new URLSearchParams(JSON.parse(text) as Record<string, string>)
    : new URLSearchParams(text);
}

export async function startGitHubStandIn(client: {
  clientId: string;
  clientSecret: string;
}): Promise<GitHubStandIn> {
  let next: GitHubAccount | undefined;
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, GitHubAccount>();
  const json = (res: http.ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  function authorize(url: URL, res: http.ServerResponse): void {
    const redirectUri = url.searchParams.get('redirect_uri') ?? '';
    if (url.searchParams.get('client_id') !== client.clientId || next === undefined) {
      json(res, 404, { error: 'unknown client' });
      return;
    }
    if (url.searchParams.get('code_challenge_method') !== 'S256') {
      json(res, 400, { error: 'pkce required' });
      return;
    }
    const code = randomBytes(10).toString('hex');
    codes.set(code, {
      clientId: client.clientId,
      redirectUri,
      challenge: url.searchParams.get('code_challenge') ?? '',
      account: next,
    });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') ?? '');
    res.writeHead(302, { location: back.toString() }).end();
  }

  async function exchange(req: http.IncomingMessage, res: http.ServerResponse) {
    const body = await bodyOf(req);
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = basic
      ? Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent)
      : [body.get('client_id'), body.get('client_secret')];
    const code = body.get('code') ?? '';
    const grant = codes.get(code);
    codes.delete(code);
    // GitHub answers a refused exchange 200 with an error body.
    if (id !== client.clientId || secret !== client.clientSecret)
      return json(res, 200, { error: 'incorrect_client_credentials' });
    if (
      grant === undefined ||
      grant.redirectUri !== body.get('redirect_uri') ||
      grant.challenge !== s256(body.get('code_verifier') ?? '')
    )
      return json(res, 200, { error: 'bad_verification_code' });
    const token = `gho_${randomBytes(16).toString('hex')}`;
    tokens.set(token, grant.account);
    return json(res, 200, {
      access_token: token,
      token_type: 'bearer',
      scope: 'read:user,user:email',
    });
  }

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      if (url.pathname === '/login/oauth/authorize') return authorize(url, res);
      if (url.pathname === '/login/oauth/access_token' && req.method === 'POST')
        return exchange(req, res);
      const account = tokens.get(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
      if (account === undefined) return json(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/api/v3/user')
        return json(res, 200, {
          id: account.id,
          login: account.login,
          name: account.name ?? null,
          email: account.email ?? null,
        });
      if (url.pathname === '/api/v3/user/emails') return json(res, 200, account.emails ?? []);
      return json(res, 404, { message: 'Not Found' });
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    login(account) {
      next = account;
    },
    async followAuthorization(authorizeUrl) {
      const response = await fetch(authorizeUrl, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (location === null) throw new Error(`the stand-in answered ${response.status}`);
      return location;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
