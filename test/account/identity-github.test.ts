import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { databaseBackends } from '../helpers/backends.js';
import { startGitHubStandIn, type GitHubStandIn } from '../helpers/github-standin.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import type { AppConfig } from '../../src/app.js';

/*
 * Auth.js's own GitHub provider, pointed at a stand-in for GitHub (its Enterprise base URL):
 * the address GitHub says is verified is the only one that counts, and a sign-in started on
 * one instance ends on another that shares the database and the secret.
 */

const password = 'correct horse battery staple';
const clientId = 'Iv1.gatehousetest';
const clientSecret = 'github-client-secret-for-the-tests';
const site = 'http://127.0.0.1:9';

describe.each(databaseBackends('github'))('sign-in with GitHub on $name', (backend) => {
  let github: GitHubStandIn;
  let first: TestServer;
  let second: TestServer;
  let dispose = async () => undefined as void;

  beforeAll(async () => {
    if (backend.skip) return;
    const created = await backend.create();
    dispose = created.dispose;
    github = await startGitHubStandIn({ clientId, clientSecret });
    const config: Partial<AppConfig> = {
      // One public origin for both instances, as behind a balancer: the redirect URI the
      // provider is given is the same whichever instance starts or ends a sign-in.
      authUrl: site,
      identityProviders: [
        {
          id: 'github',
          name: 'GitHub',
          clientId,
          clientSecret,
          issuer: github.baseUrl,
          signup: 'open',
        },
      ],
    };
    first = await startServer({ databaseUrl: created.url, config });
    // The second instance's public origin is the first's: one site behind a balancer.
    second = await startServer({ databaseUrl: created.url, config });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await github?.close();
    await dispose();
  });

  /** Starts on the first instance; the callback is answered by `end` (as a balancer might). */
  async function viaGitHub(browser: Client, end: TestServer) {
    const csrfToken = await browser.csrfToken();
    const begun = await browser.postForm('/api/auth/signin/github', {
      csrfToken,
      callbackUrl: '/',
    });
    expect(begun.status).toBe(302);
    const back = new URL(await github.followAuthorization(begun.headers.get('location') ?? ''));
    // The stand-in sends the browser back to the site; `end` is the instance that answers.
    expect(back.origin).toBe(site);
    const atEnd = new Client(end.url);
    for (const [name, value] of browser.cookies) atEnd.cookies.set(name, value);
    const landed = await atEnd.get(`${back.pathname}${back.search}`);
    for (const [name, value] of atEnd.cookies) browser.cookies.set(name, value);
    return landed.headers.get('location') ?? '';
  }

  it.skipIf(backend.skip)(
    'an unverified primary address is not GitHub’s word: no link, no account takeover',
    async () => {
      await addUser(first, 'linus@example.com', password);
      github.login({
        id: 4242,
        login: 'mallory',
        email: 'linus@example.com',
        emails: [{ email: 'linus@example.com', primary: true, verified: false }],
      });
      const browser = new Client(first.url);
      const location = await viaGitHub(browser, first);
      expect(location).toContain('error=AccessDenied&code=identity_address_unverified');
      expect(await browser.session()).toBeNull();
    },
  );

  it.skipIf(backend.skip)(
    'a verified primary address signs up a new person; the callback may end on another instance',
    async () => {
      github.login({
        id: 1001,
        login: 'octo',
        name: 'Octo Cat',
        email: null,
        emails: [
          { email: 'old@example.com', primary: false, verified: true },
          { email: 'octo@example.com', primary: true, verified: true },
        ],
      });
      const browser = new Client(first.url);
      const location = await viaGitHub(browser, second);
      expect(location).toBe(`${site}/`);
      const session = (await new Client(first.url)
        .request('/api/auth/session', {
          headers: { cookie: browser.cookieHeader() },
        })
        .then((r) => r.json())) as { user: { email: string; name: string } };
      expect(session.user).toMatchObject({ email: 'octo@example.com', name: 'Octo Cat' });
    },
  );

  it.skipIf(backend.skip)(
    'GitHub’s numeric id is the identity: a new address changes nothing',
    async () => {
      github.login({
        id: 1001,
        login: 'octo',
        emails: [{ email: 'renamed@example.com', primary: true, verified: true }],
      });
      const browser = new Client(first.url);
      expect(await viaGitHub(browser, first)).toBe(`${site}/`);
      const session = (await browser.session()) as { user: { email: string } };
      expect(session.user.email).toBe('octo@example.com');
    },
  );
});
