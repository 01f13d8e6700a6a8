import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { databaseBackends } from '../helpers/backends.js';
import { errorCode, postWithCsrf } from '../helpers/account-requests.js';
import type { IdentityProvider } from '../helpers/oidc-idp.js';
import {
  signedInAs,
  startProviderService,
  viaProvider,
  type ProviderService,
} from '../helpers/provider-service.js';
import { addUser, type TestServer } from '../helpers/server.js';
import { storedSoftPasskey } from '../helpers/soft-passkey.js';
import { codeAt, proofsOf, turnOnTotp } from '../helpers/totp-codes.js';

/*
 * Every rule of the account holds for a provider's sign-in (adoption spec §1): a second factor
 * is still asked for, a disabled account gets nothing, sign-up only where it is open, a recent
 * session links at once, the last way in stays, an identity signs in one account only.
 */

const password = 'correct horse battery staple';

async function identitiesOf(browser: Client) {
  const response = await browser.get('/api/account/identities');
  return ((await response.json()) as { identities: { id: string; provider: string }[] }).identities;
}

describe.each(databaseBackends('identity-rules'))('a provider’s sign-in on $name', (backend) => {
  let service: ProviderService;
  let idp: IdentityProvider;
  let server: TestServer;
  let dispose = async () => undefined as void;

  beforeAll(async () => {
    if (backend.skip) return;
    const created = await backend.create();
    dispose = created.dispose;
    service = await startProviderService({
      databaseUrl: created.url,
      signup: 'open',
      config: { identityProviderTimeoutSeconds: 1, reauthMaxAgeSeconds: 300 },
      otherClients: ['another-client'],
    });
    ({ idp, server } = service);
  });
  afterAll(async () => {
    await service?.close();
    await dispose();
  });

  it.skipIf(backend.skip)(
    'sign-up open: a new person gets an account with no password and the address as vouched for; its only way in stays',
    async () => {
      idp.setFault('none');
      idp.login({ sub: 'new-1', email: 'newcomer@example.com', emailVerified: true, name: 'Nia' });
      const browser = new Client(server.url);
      const { location } = await viaProvider(browser, idp);
      expect(location).toBe(`${server.url}/`);
      expect(await signedInAs(browser)).toBe('newcomer@example.com');
      const account = (await (await browser.get('/api/account')).json()) as {
        user: { emailVerified: boolean; name: string };
      };
      expect(account.user).toMatchObject({ emailVerified: true, name: 'Nia' });
      // No password matches an account made this way.
      const guess = await new Client(server.url).signIn('newcomer@example.com', '');
      expect((await guess.json()) as { url: string }).toMatchObject({
        url: expect.stringContaining('error=CredentialsSignin'),
      });
      // Its page says how to add a password, and offers no second link of the same provider.
      const page = await (await browser.get('/account')).text();
      expect(page).toContain('This account has no password');
      expect(page).not.toContain('id="currentPassword"');
      expect(page).not.toContain('Link Acme SSO');
      const [identity] = await identitiesOf(browser);
      const unlink = await postWithCsrf(
        browser,
        `/api/account/identities/${identity?.id}/unlink`,
        {},
      );
      expect(await errorCode(unlink)).toBe('409 last_sign_in_method');
      expect(await identitiesOf(browser)).toHaveLength(1);
    },
  );

  it.skipIf(backend.skip)(
    'an account without a password keeps one way in: its last passkey or identity stays (409)',
    async () => {
      idp.login({ sub: 'keys-only', email: 'keys@example.com', emailVerified: true });
      const browser = new Client(server.url);
      await viaProvider(browser, idp);
      const user = await server.services.users.findByEmail('keys@example.com');
      const { id: passkeyId } = await storedSoftPasskey(server.db, user?.id ?? '', {
        name: 'Laptop',
        at: Date.now(),
      });
      // A passkey and an identity: either may go, not both.
      const [identity] = await identitiesOf(browser);
      const unlinked = await postWithCsrf(
        browser,
        `/api/account/identities/${identity?.id}/unlink`,
        {},
      );
      expect(unlinked.status).toBe(204);
      const removed = await postWithCsrf(browser, `/api/account/passkeys/${passkeyId}/remove`, {});
      expect(await errorCode(removed)).toBe('409 last_sign_in_method');
    },
  );

  it.skipIf(backend.skip)(
    'an address the provider does not vouch for makes no account, even with sign-up open',
    async () => {
      idp.login({ sub: 'new-2', email: 'unvouched@example.com', emailVerified: false });
      const browser = new Client(server.url);
      const { location } = await viaProvider(browser, idp);
      expect(location).toContain('error=AccessDenied&code=identity_address_unverified');
      expect(await signedInAs(browser)).toBeUndefined();
      expect(await server.services.users.findByEmail('unvouched@example.com')).toBeNull();
    },
  );

  it.skipIf(backend.skip)(
    'a linked account with TOTP is asked for its code after the provider, which then signs in',
    async () => {
      const userId = await addUser(server, 'totp@example.com', password, 'Tess');
      const browser = new Client(server.url);
      await browser.signIn('totp@example.com', password);
      const { secret } = await turnOnTotp(browser);
      // Linked from her recent session at once; the provider's sign-in itself still asks for
      // the code (her session stays until one succeeds).
      idp.login({ sub: 'tess', email: 'tess@elsewhere.example', emailVerified: true });
      const linked = await viaProvider(browser, idp, 'link');
      expect(linked.location).toContain('code=second_factor_required');
      expect(await signedInAs(browser)).toBe('totp@example.com');
      expect(await identitiesOf(browser)).toEqual([expect.objectContaining({ provider: 'oidc' })]);
      // Another browser: the provider, then the code.
      const other = new Client(server.url);
      const { location } = await viaProvider(other, idp);
      expect(location).toContain(
        '/api/auth/signin?error=CredentialsSignin&code=second_factor_required',
      );
      expect(await signedInAs(other)).toBeUndefined();
      const step = await other.signIn('', '', '/api/auth/callback/credentials', {
        // The confirmation used step 0's code; each is taken once.
        otp: codeAt(secret, 1),
      });
      expect(step.status).toBe(200);
      expect(await signedInAs(other)).toBe('totp@example.com');
      expect(await proofsOf(server.db, userId)).toContain('identity:oidc otp');
      // Her sessions list says how each signed in.
      const listed = (await (await other.get('/api/account/sessions')).json()) as {
        sessions: { current: boolean; method: string }[];
      };
      expect(listed.sessions.find((session) => session.current)?.method).toBe('oidc');
      expect(listed.sessions.map((session) => session.method).sort()).toEqual(['oidc', 'password']);
    },
  );

  it.skipIf(backend.skip)('a disabled account gets no session, in words', async () => {
    await addUser(server, 'off@example.com', password);
    const browser = new Client(server.url);
    await browser.signIn('off@example.com', password);
    idp.login({ sub: 'off', email: 'off@example.com', emailVerified: true });
    await viaProvider(browser, idp, 'link');
    const user = await server.services.users.findByEmail('off@example.com');
    await server.services.users.setDisabled(user?.id ?? '', true);
    const fresh = new Client(server.url);
    const { location } = await viaProvider(fresh, idp);
    expect(location).toContain('error=AccessDenied&code=account_disabled');
    expect(await signedInAs(fresh)).toBeUndefined();
    const page = await fresh.get(new URL(location).pathname + new URL(location).search);
    expect(await page.text()).toContain('is disabled');
  });

  it.skipIf(backend.skip)('an identity signs in one account: not linked to a second', async () => {
    await addUser(server, 'bob@example.com', password);
    const bob = new Client(server.url);
    await bob.signIn('bob@example.com', password);
    // `tess` is Tess's identity: Bob's recent session does not take it.
    idp.login({ sub: 'tess', email: 'tess@elsewhere.example', emailVerified: true });
    const { location } = await viaProvider(bob, idp, 'link');
    expect(location).toContain('error=AccessDenied&code=identity_linked_elsewhere');
    expect(await identitiesOf(bob)).toEqual([]);
    expect(await signedInAs(bob)).toBe('bob@example.com');
  });

  it.skipIf(backend.skip)(
    'a provider’s button on the sign-in page never links to whoever is signed in there',
    async () => {
      await addUser(server, 'carol@example.com', password);
      const carol = new Client(server.url);
      await carol.signIn('carol@example.com', password);
      // Someone else at Carol's screen signs in with their own provider account (sign-up open):
      // their own new account, and Carol's stays without it.
      idp.login({ sub: 'dave', email: 'dave@example.com', emailVerified: true });
      const { location } = await viaProvider(carol, idp);
      expect(location).toBe(`${server.url}/`);
      expect(await signedInAs(carol)).toBe('dave@example.com');
      const check = new Client(server.url);
      await check.signIn('carol@example.com', password);
      expect(await identitiesOf(check)).toEqual([]);
    },
  );

  it.skipIf(backend.skip)(
    'a callback is single use and bound to the browser that started it',
    async () => {
      idp.login({ sub: 'new-1', email: 'newcomer@example.com', emailVerified: true });
      const browser = new Client(server.url);
      const { back } = await viaProvider(browser, idp);
      expect(await signedInAs(browser)).toBe('newcomer@example.com');
      // The same answer again, in the same browser (signed out) and in another one.
      await browser.signOut();
      for (const replay of [browser, new Client(server.url)]) {
        const again = await replay.get(`${back.pathname}${back.search}`);
        expect(again.status).toBe(302);
        expect(again.headers.get('location')).toContain(
          '/api/auth/signin?error=OAuthCallbackError',
        );
        expect(await signedInAs(replay)).toBeUndefined();
      }
      // A state changed on the way back.
      const csrfToken = await browser.csrfToken();
      const start = await browser.postForm('/api/auth/signin/oidc', {
        csrfToken,
        callbackUrl: '/',
      });
      const answer = new URL(await idp.followAuthorization(start.headers.get('location') ?? ''));
      answer.searchParams.set('state', `${answer.searchParams.get('state')}x`);
      const tampered = await browser.get(`${answer.pathname}${answer.search}`);
      expect(tampered.headers.get('location')).toContain('error=OAuthCallbackError');
      expect(await signedInAs(browser)).toBeUndefined();
    },
  );

  it.skipIf(backend.skip)(
    'a wrong iss, or a code issued to another client, is refused at the callback',
    async () => {
      idp.login({ sub: 'new-1', email: 'newcomer@example.com', emailVerified: true });
      const browser = new Client(server.url);
      const csrfToken = await browser.csrfToken();
      const start = await browser.postForm('/api/auth/signin/oidc', { csrfToken });
      const authorize = new URL(start.headers.get('location') ?? '');
      const answer = new URL(await idp.followAuthorization(authorize.toString()));
      const wrongIss = new URL(answer);
      wrongIss.searchParams.set('iss', 'https://evil.example');
      const refused = await browser.get(`${wrongIss.pathname}${wrongIss.search}`);
      expect(refused.headers.get('location')).toContain('error=OAuthCallbackError');
      expect(await signedInAs(browser)).toBeUndefined();

      // A code the provider issued to another client, with this browser's own state.
      const again = await browser.postForm('/api/auth/signin/oidc', {
        csrfToken: await browser.csrfToken(),
      });
      const ours = new URL(again.headers.get('location') ?? '');
      const theirs = new URL(ours);
      theirs.searchParams.set('client_id', 'another-client');
      const stolen = new URL(await idp.followAuthorization(theirs.toString()));
      expect(stolen.searchParams.get('code')).toBeTruthy();
      const swapped = await browser.get(`${stolen.pathname}${stolen.search}`);
      expect(swapped.headers.get('location')).toContain('error=OAuthCallbackError');
      expect(await signedInAs(browser)).toBeUndefined();
    },
  );

  it.skipIf(backend.skip)(
    'a provider down, slow or answering garbage: the sign-in page says so, nothing hangs, never a 5xx',
    async () => {
      const browser = new Client(server.url);
      for (const fault of ['down', 'slow'] as const) {
        // Far slower than the 1 s IDENTITY_PROVIDER_TIMEOUT: the bound below catches a sign-in
        // that waited for the provider, not a loaded machine's slowness.
        idp.setFault(fault, 25_000);
        const started = Date.now();
        const csrfToken = await browser.csrfToken();
        const start = await browser.postForm('/api/auth/signin/oidc', { csrfToken });
        expect(start.status).toBe(302);
        expect(start.headers.get('location')).toBe(
          `${server.url}/api/auth/signin?error=OAuthSignInError&provider=oidc`,
        );
        expect(Date.now() - started).toBeLessThan(15_000);
      }
      for (const fault of ['malformed-token', 'huge-token'] as const) {
        idp.setFault('none');
        const csrfToken = await browser.csrfToken();
        const start = await browser.postForm('/api/auth/signin/oidc', { csrfToken });
        const back = new URL(await idp.followAuthorization(start.headers.get('location') ?? ''));
        idp.setFault(fault);
        const landed = await browser.get(`${back.pathname}${back.search}`);
        expect(landed.status).toBe(302);
        expect(landed.headers.get('location')).toContain('error=OAuthCallbackError');
      }
      idp.setFault('none');
      const page = await browser.get('/api/auth/signin?error=OAuthCallbackError&provider=oidc');
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Signing in with Acme SSO did not complete');
    },
  );
});
