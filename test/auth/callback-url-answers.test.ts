import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOnOrigin, offSitePayloads, originTricks } from '../helpers/callback-targets.js';
import { Client, sessionCookieName } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { storedSoftPasskey, type SoftPasskey } from '../helpers/soft-passkey.js';
import { browser, unescape } from '../pages/page-helpers.js';

// Issue 35, item 8: whatever callbackUrl a request carries (query, form or JSON field, the
// callback-url cookie), every callback URL the service emits — a redirect's Location, the
// `{url}` of X-Auth-Return-Redirect, the callback-url cookie, the pages' hidden fields and
// Continue links — is on the public origin however an app reads it, its path included.

const password = 'correct horse battery staple';
const email = 'ada@example.com';
const callbackCookie = 'authjs.callback-url';
const query = (payload: string) => `?callbackUrl=${encodeURIComponent(payload)}`;

/** Every callback URL an answer carries: Location, `{url}`, the cookie, fields and links. */
async function emitted(response: Response): Promise<string[]> {
  const found: string[] = [];
  const location = response.headers.get('location');
  if (location !== null) found.push(location);
  for (const line of response.headers.getSetCookie()) {
    const [pair = ''] = line.split(';');
    if (pair.startsWith(`${callbackCookie}=`))
      found.push(decodeURIComponent(pair.slice(callbackCookie.length + 1)));
  }
  const body = await response.text();
  if (response.headers.get('content-type')?.startsWith('application/json') === true) {
    const url = (JSON.parse(body) as { url?: unknown } | null)?.url;
    if (typeof url === 'string') found.push(url);
  }
  for (const [, value] of body.matchAll(/name="callbackUrl" value="([^"]*)"/g))
    found.push(unescape(value ?? ''));
  for (const [, href] of body.matchAll(/<a class="button" href="([^"]*)">Continue<\/a>/g))
    found.push(unescape(href ?? ''));
  return found;
}

describe('every callback URL the service emits stays on its origin', () => {
  let server: TestServer;
  let signedInCookie: string;
  let key: SoftPasskey;
  let counter = 0;

  beforeAll(async () => {
    server = await startServer();
    const userId = await addUser(server, email, password);
    ({ key } = await storedSoftPasskey(server.db, userId, { name: 'Soft key', at: Date.now() }));
    const client = new Client(server.url);
    expect((await client.signIn(email, password)).status).toBe(200);
    signedInCookie = `${sessionCookieName}=${client.sessionCookie()}`;
  });
  afterAll(() => server.close());

  /** A browser that holds `payload` as its callback-url cookie (as Auth.js would encode it). */
  function holding(payload: string): Client {
    const client = browser(server);
    client.cookies.set(callbackCookie, encodeURIComponent(payload));
    return client;
  }

  async function credentials(
    client: Client,
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const csrfToken = await client.csrfToken();
    return client.postForm(path, { csrfToken, email, password, ...fields }, headers);
  }

  const json = { 'x-auth-return-redirect': '1' };
  const answers: [string, (payload: string) => Promise<Response>][] = [
    ['the sign-in page', (p) => browser(server).get(`/api/auth/signin${query(p)}`)],
    ['the sign-in page, from the cookie', (p) => holding(p).get('/api/auth/signin')],
    [
      'the sign-in page’s Continue link for someone signed in',
      (p) => browser(server).get(`/api/auth/signin${query(p)}`, { cookie: signedInCookie }),
    ],
    ['the sign-out page', (p) => browser(server).get(`/api/auth/signout${query(p)}`)],
    ['the sign-out page, from the cookie', (p) => holding(p).get('/api/auth/signout')],
    [
      'a sign-in form post’s redirect',
      (p) => credentials(browser(server), '/api/auth/callback/credentials', { callbackUrl: p }),
    ],
    [
      'a sign-in’s X-Auth-Return-Redirect {url}',
      (p) =>
        credentials(
          new Client(server.url),
          '/api/auth/callback/credentials',
          { callbackUrl: p },
          json,
        ),
    ],
    [
      'a sign-in’s {url}, the callbackUrl in its query',
      (p) =>
        credentials(new Client(server.url), `/api/auth/callback/credentials${query(p)}`, {}, json),
    ],
    [
      'a sign-in’s redirect, from the cookie',
      (p) => credentials(holding(p), '/api/auth/callback/credentials', {}),
    ],
    [
      'a sign-in on /api/auth/signin/credentials',
      (p) => credentials(browser(server), '/api/auth/signin/credentials', { callbackUrl: p }),
    ],
    [
      'a sign-out form post’s redirect',
      async (p) => {
        const client = browser(server);
        const csrfToken = await client.csrfToken();
        return client.postForm('/api/auth/signout', { csrfToken, callbackUrl: p });
      },
    ],
    [
      'a sign-out’s {url}, from the cookie',
      async (p) => {
        const client = holding(p);
        const csrfToken = await client.csrfToken();
        return client.postForm('/api/auth/signout', { csrfToken }, json);
      },
    ],
    ['the CSRF route’s cookie', (p) => new Client(server.url).get(`/api/auth/csrf${query(p)}`)],
    ['the session route’s cookie', (p) => holding(p).get('/api/auth/session')],
    [
      'a passkey sign-in’s {url}',
      async (p) => {
        const client = new Client(server.url);
        const asked = await client.get('/api/auth/webauthn-options/passkey?action=authenticate');
        const { options } = (await asked.json()) as { options: { challenge: string } };
        counter += 1;
        const data = key.assert({
          challenge: options.challenge,
          origin: server.url,
          userVerified: true,
          counter,
        });
        const csrfToken = await client.csrfToken();
        const fields = { csrfToken, action: 'authenticate', data, callbackUrl: p };
        return client.postForm('/api/auth/callback/passkey', fields, json);
      },
    ],
    ['the account page’s way to sign in', (p) => browser(server).get(`/account${query(p)}`)],
  ];

  describe.each(answers)('%s', (where, answer) => {
    async function expectStaysOn(payload: string) {
      const response = await answer(payload);
      expect(response.status).toBeLessThan(500);
      const values = await emitted(response);
      // Each answer carries one at least, and none is an error page: the case was exercised.
      expect(values.length).toBeGreaterThan(0);
      for (const value of values) {
        expect(value).not.toContain('error=');
        expectOnOrigin(value, server.url, where);
      }
    }
    it.each(offSitePayloads)('given %j', (payload) => expectStaysOn(payload));
    it.each(originTricks)('given the origin with %s', (_trick, aim) =>
      expectStaysOn(aim(server.url)),
    );
  });

  it.each<[string, string]>([
    ['/dashboard', '/dashboard'],
    ['/a/b?c=d#e', '/a/b?c=d#e'],
    ['/search?next=%2F%2Fx', '/search?next=%2F%2Fx'],
  ])('a path on the origin (%s) is still where sign-in ends, as Auth.js settles it', async (p) => {
    const response = await credentials(browser(server), '/api/auth/callback/credentials', {
      callbackUrl: p,
    });
    expect(response.headers.get('location')).toBe(`${server.url}${p}`);
  });
});
