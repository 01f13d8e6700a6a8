import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { browser, hidden, unescape } from '../pages/page-helpers.js';

/*
 * Every callback URL the service hands back (the pages' hidden fields and Continue links, the
 * callback-url cookie, the sign-in's and sign-out's redirects, the JSON `url` next-auth reads)
 * stays on the public origin, also for an application that redirects to the path alone
 * (`new URL(x).pathname`): `?callbackUrl=//evil.example/x` once came back as
 * `<origin>//evil.example/x`, whose path is a protocol-relative URL off-site.
 */

const password = 'correct horse battery staple';
const email = 'ada@example.com';

const payloads = [
  '//evil.example/x',
  '//evil.example',
  '/\\evil.example/x',
  '\\\\evil.example',
  '/%2F%2Fevil.example/x',
  '/%2f%2fevil.example',
  '/%5Cevil.example',
  '/%5C%5Cevil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/./ /evil.example',
  '/.//evil.example',
  '/a/..//evil.example',
  'https:evil.example',
  'https:/evil.example',
  'https://evil.example/x',
  'javascript:alert(1)',
  'data:text/html,x',
  'http://evil.example',
  // Filled in with the server's origin below.
  '{origin}//evil.example/x',
  '{origin}@evil.example/',
  '{origin}.evil.example/',
  '//{host}/x',
];

/** Whether `location` is on `origin`, also for a reader of its path alone. */
function staysOnSite(location: string, origin: string): boolean {
  const url = new URL(location, origin);
  if (url.origin !== origin) return false;
  const after = location.startsWith(origin) ? location.slice(origin.length) : location;
  let decoded = url.pathname;
  try {
    decoded = decodeURIComponent(url.pathname);
  } catch {
    // Judged as written.
  }
  return ![after, url.pathname, decoded].some((path) => /^[/\\]{2}/.test(path));
}

/** Every callback URL a page carries: hidden callbackUrl fields and Continue links. */
function destinationsIn(html: string): string[] {
  const fields = html.matchAll(/<input type="hidden" name="callbackUrl" value="([^"]*)">/g);
  const links = html.matchAll(/<a class="button" href="([^"]*)"/g);
  return [...fields, ...links].map(([, value]) => unescape(value ?? ''));
}

describe('a callback URL never leaves the site', () => {
  let server: TestServer;
  let origin: string;

  beforeAll(async () => {
    server = await startServer();
    origin = server.url;
    await addUser(server, email, password, 'Ada');
  });
  afterAll(() => server.close());

  const each = () =>
    payloads.map((payload) =>
      payload.replace('{origin}', origin).replace('{host}', new URL(origin).host),
    );

  const expectOnSite = (where: string, value: string | null | undefined) => {
    if (value === null || value === undefined || value === '') return;
    expect(staysOnSite(value, origin), `${where}: ${value}`).toBe(true);
  };

  it('the sign-in and sign-out pages, and the CSRF read, keep none of them', async () => {
    for (const payload of each()) {
      const query = `?callbackUrl=${encodeURIComponent(payload)}`;
      const client = browser(server);
      const signIn = await client.get(`/api/auth/signin${query}`);
      expect(signIn.status, payload).toBeLessThan(500);
      const page = await signIn.text();
      for (const value of destinationsIn(page)) expectOnSite(`sign-in page for ${payload}`, value);
      const signOut = await browser(server).get(`/api/auth/signout${query}`);
      expect(signOut.status, payload).toBeLessThan(500);
      for (const value of destinationsIn(await signOut.text()))
        expectOnSite(`sign-out page for ${payload}`, value);
      const csrf = new Client(server.url);
      expect((await csrf.get(`/api/auth/csrf${query}`)).status).toBe(200);
      const cookie = csrf.cookies.get('authjs.callback-url');
      expectOnSite(`callback-url cookie for ${payload}`, cookie && decodeURIComponent(cookie));
    }
  });

  it('a sign-in posted with one lands on the site, as a JSON url and as a redirect', async () => {
    for (const payload of each()) {
      const json = new Client(server.url);
      const answer = await json.signIn(email, password, undefined, { callbackUrl: payload });
      expect(answer.status, payload).toBe(200);
      expectOnSite(`JSON url for ${payload}`, ((await answer.json()) as { url: string }).url);

      const form = browser(server);
      const page = await (await form.get('/api/auth/signin')).text();
      const posted = await form.postForm('/api/auth/callback/credentials', {
        csrfToken: hidden(page, 'csrfToken'),
        email,
        password,
        callbackUrl: payload,
      });
      expect(posted.status, payload).toBe(302);
      expectOnSite(`redirect for ${payload}`, posted.headers.get('location'));

      // Signed in, the sign-in page greets with a Continue link to where it was asked to go.
      const again = await form.get(`/api/auth/signin?callbackUrl=${encodeURIComponent(payload)}`);
      for (const value of destinationsIn(await again.text()))
        expectOnSite(`signed-in sign-in page for ${payload}`, value);

      const signedOut = await form.postForm('/api/auth/signout', {
        csrfToken: hidden(page, 'csrfToken'),
        callbackUrl: payload,
      });
      expect(signedOut.status, payload).toBe(302);
      expectOnSite(`sign-out redirect for ${payload}`, signedOut.headers.get('location'));
    }
  });
});
