import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAssertion } from '../../src/account/passkeys/assertion.js';
import { createPasskeyStore } from '../../src/account/passkeys/passkey-store.js';
import { sealChallenge } from '../../src/account/passkeys/webauthn-challenge.js';
import type { MailRequest } from '../../src/mail/mail-queue.js';
import { Client } from '../helpers/client.js';
import { softPasskey, type SoftPasskey } from '../helpers/soft-passkey.js';
import { createTestDatabase, hasPostgres } from '../helpers/postgres.js';
import { addUser, startServer, testSecret, type TestServer } from '../helpers/server.js';
import { proofsOf as proofsIn } from '../helpers/totp-codes.js';

// Passkeys over HTTP, without an authenticator (test/account/passkeys-in-chromium.test.ts has
// one): the options say nothing about who asks, registration needs a recent session, the
// account's list, rename and remove (404 for another person's), their events and notices, and
// the store's single-use challenges on both backends.

const password = 'correct horse battery staple';
const reauthMaxAgeSeconds = 600;
const options = '/api/auth/webauthn-options/passkey';

/** The header names of an answer but its date (which moves). */
function headerNames(response: Response): string[] {
  const names: string[] = [];
  response.headers.forEach((_value, name) => {
    if (name !== 'date') names.push(name);
  });
  return names;
}

describe('passkeys over HTTP', () => {
  let server: TestServer;
  let clock = Date.now();
  const mails: MailRequest[] = [];

  beforeAll(async () => {
    server = await startServer({
      now: () => clock,
      config: { reauthMaxAgeSeconds },
      // A mail queue that keeps what it is given: the notices are what is checked.
      wrap: (deps) => ({
        ...deps,
        mail: {
          enabled: true,
          enqueue: (_db, mail) => {
            mails.push(mail);
            return Promise.resolve();
          },
        },
      }),
    });
    await addUser(server, 'ada@example.com', password, 'Ada');
    await addUser(server, 'grace@example.com', password, 'Grace');
  });
  afterAll(() => server.close());

  /** A passkey row for `email`, as a registration would have written it. */
  async function passkeyOf(email: string, name: string): Promise<string> {
    const user = await server.services.users.findByEmail(email);
    const id = await createPasskeyStore(server.db).add(
      server.db,
      {
        userId: user?.id ?? '',
        credentialId: randomUUID().replaceAll('-', ''),
        publicKey: 'AAAA',
        counter: 0,
        transports: ['internal'],
        backedUp: false,
        name,
      },
      clock,
    );
    return id ?? '';
  }

  async function signedIn(email: string): Promise<Client> {
    const client = new Client(server.url);
    expect((await client.signIn(email, password)).status).toBe(200);
    return client;
  }

  const post = async (client: Client, path: string, body: Record<string, unknown> = {}) =>
    client.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': await client.csrfToken() },
      body: JSON.stringify(body),
    });

  it('answers the same options for a known address, an unknown one and none: discoverable, no credential named', async () => {
    const answers = await Promise.all(
      ['?email=ada%40example.com', '?email=nobody%40example.com', '', '?action=authenticate'].map(
        (query) => fetch(`${server.url}${options}${query}`),
      ),
    );
    const shapes = await Promise.all(
      answers.map(async (response) => {
        const body = (await response.json()) as { options: Record<string, unknown> };
        return {
          status: response.status,
          headers: headerNames(response),
          cookie: (response.headers.get('set-cookie') ?? '').replace(/=[^;]+/, '=…'),
          body: { ...body, options: { ...body.options, challenge: '…' } },
        };
      }),
    );
    for (const shape of shapes) expect(shape).toEqual(shapes[0]);
    expect(shapes[0]).toMatchObject({
      status: 200,
      cookie: expect.stringMatching(
        /^authjs\.challenge=…; Path=\/; Expires=.+; HttpOnly; SameSite=Lax$/,
      ),
      body: {
        action: 'authenticate',
        options: { rpId: '127.0.0.1', userVerification: 'preferred' },
      },
    });
    expect(shapes[0]?.body.options).not.toHaveProperty('allowCredentials.0');
    // Auth.js's refusals, word for word.
    const other = await fetch(`${server.url}${options}?action=other`);
    expect([other.status, await other.json()]).toEqual([400, { error: 'Invalid action' }]);
    const register = await fetch(`${server.url}${options}?action=register`);
    expect([register.status, await register.json()]).toEqual([400, { error: 'Invalid request' }]);
  });

  it('lists passkey as Auth.js lists a WebAuthn provider, for next-auth/webauthn to find', async () => {
    const providers = (await (await fetch(`${server.url}/api/auth/providers`)).json()) as Record<
      string,
      unknown
    >;
    expect(Object.keys(providers)).toEqual(['credentials', 'passkey']);
    expect(providers.passkey).toEqual({
      id: 'passkey',
      name: 'Passkey',
      type: 'webauthn',
      signinUrl: `${server.url}/api/auth/signin/passkey`,
      callbackUrl: `${server.url}/api/auth/callback/passkey`,
    });
  });

  it('offers registration only to a recent session, for that user, and never for an address', async () => {
    const client = await signedIn('ada@example.com');
    const fresh = await client.get(`${options}?action=register`);
    expect(fresh.status).toBe(200);
    const body = (await fresh.json()) as {
      action: string;
      options: { user: { name: string }; authenticatorSelection: unknown };
    };
    expect(body.action).toBe('register');
    expect(body.options.user.name).toBe('ada@example.com');
    expect(body.options.authenticatorSelection).toMatchObject({ residentKey: 'required' });
    // A signed-in browser must name its action, as in Auth.js.
    expect((await client.get(options)).status).toBe(400);
    clock += (reauthMaxAgeSeconds + 1) * 1000;
    try {
      const stale = await client.get(`${options}?action=register`);
      expect(stale.status).toBe(401);
      expect(await stale.json()).toMatchObject({ error: { code: 'reauthentication_required' } });
      const late = await client.postForm('/api/auth/callback/passkey', {
        csrfToken: await client.csrfToken(),
        action: 'register',
        data: '{"id":"AAAA"}',
      });
      expect(late.status).toBe(401);
    } finally {
      clock -= (reauthMaxAgeSeconds + 1) * 1000;
    }
  });

  it('refuses an assertion with no challenge as Auth.js does, and creates no session', async () => {
    const client = new Client(server.url);
    const refused = await client.postForm(
      '/api/auth/callback/passkey',
      { csrfToken: await client.csrfToken(), action: 'authenticate', data: '{"id":"AAAA"}' },
      { 'x-auth-return-redirect': '1' },
    );
    expect(refused.status).toBe(200);
    expect(await refused.json()).toEqual({
      url: `${server.url}/api/auth/error?error=WebAuthnVerificationError`,
    });
    expect(client.sessionCookie()).toBeUndefined();
    // Without the CSRF token: Auth.js's MissingCSRF, nothing checked.
    const noToken = await client.postForm(
      '/api/auth/callback/passkey',
      { action: 'authenticate', data: '{"id":"AAAA"}' },
      { 'x-auth-return-redirect': '1' },
    );
    expect(await noToken.json()).toMatchObject({
      url: expect.stringContaining('error=MissingCSRF'),
    });
  });

  it('lists, renames and removes the account’s own passkeys, with events and notices; another person’s id is 404', async () => {
    const mine = await passkeyOf('ada@example.com', 'Laptop');
    const theirs = await passkeyOf('grace@example.com', 'Phone');
    const client = await signedIn('ada@example.com');
    const account = (await (await client.get('/api/account')).json()) as {
      secondFactors: { passkeys: number };
    };
    expect(account.secondFactors.passkeys).toBe(1);
    const listed = (await (await client.get('/api/account/passkeys')).json()) as {
      passkeys: { id: string; name: string; lastUsedAt: string | null }[];
    };
    expect(listed.passkeys).toEqual([
      { id: mine, name: 'Laptop', createdAt: expect.any(String), lastUsedAt: null },
    ]);
    for (const path of [
      `/api/account/passkeys/${theirs}/rename`,
      `/api/account/passkeys/${theirs}/remove`,
    ]) {
      const refused = await post(client, path, { name: 'Mine now' });
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ error: { code: 'not_found' } });
    }
    const renamed = await post(client, `/api/account/passkeys/${mine}/rename`, { name: ' Work ' });
    expect([renamed.status, await renamed.json()]).toEqual([200, { status: 'renamed' }]);
    expect((await post(client, `/api/account/passkeys/${mine}/rename`, { name: '' })).status).toBe(
      422,
    );
    const before = mails.length;
    const removed = await post(client, `/api/account/passkeys/${mine}/remove`);
    expect([removed.status, await removed.json()]).toEqual([200, { status: 'removed' }]);
    expect(mails.slice(before)).toEqual([
      expect.objectContaining({
        kind: 'passkey-removed-notice',
        to: 'ada@example.com',
        values: expect.objectContaining({ passkeyName: 'Work', lockLink: expect.any(String) }),
      }),
    ]);
    expect((await post(client, `/api/account/passkeys/${mine}/remove`)).status).toBe(404);
    const events = (await (await client.get('/api/account/events')).json()) as {
      events: { type: string }[];
    };
    expect(events.events.map((event) => event.type)).toContain('passkey_removed');
    // Grace's passkey is untouched.
    expect(
      await createPasskeyStore(server.db).list(
        (await server.services.users.findByEmail('grace@example.com'))?.id ?? '',
      ),
    ).toHaveLength(1);
  });

  it('asks a session that is no longer recent to re-authenticate before removing', async () => {
    const id = await passkeyOf('ada@example.com', 'Old key');
    const client = await signedIn('ada@example.com');
    clock += (reauthMaxAgeSeconds + 1) * 1000;
    try {
      // The page's remove form asks for the password then, and the password does it.
      const page = new Client(server.url, {
        accept: 'text/html',
        origin: server.url,
        'sec-fetch-site': 'same-origin',
      });
      await page.signIn('ada@example.com', password);
      clock += (reauthMaxAgeSeconds + 1) * 1000;
      const html = await (await page.get('/account')).text();
      expect(html).toContain(`id="remove-password-${id}" name="currentPassword"`);
      const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const asked = await page.postForm('/account/passkeys/remove', { csrfToken, id });
      expect(asked.status).toBe(401);
      expect(await asked.text()).toContain('Enter your current password to remove a passkey.');
      const done = await page.postForm('/account/passkeys/remove', {
        csrfToken,
        id,
        currentPassword: password,
      });
      expect([done.status, done.headers.get('location')]).toEqual([
        303,
        `${server.url}/account?done=passkey-remove`,
      ]);
      clock -= (reauthMaxAgeSeconds + 1) * 1000;
      const other = await passkeyOf('ada@example.com', 'Other key');
      const refused = await post(client, `/api/account/passkeys/${other}/remove`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: { code: 'reauthentication_required' } });
    } finally {
      clock -= (reauthMaxAgeSeconds + 1) * 1000;
    }
  });
});

describe('signing in with a passkey over HTTP (a software authenticator)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer({ throttle: { ipMaxFailures: 8 } });
  });
  afterAll(() => server.close());

  /** A user with a software passkey registered at `counter`. */
  async function enrolled(email: string, counter = 0) {
    const userId = await addUser(server, email, password);
    const key = softPasskey();
    const id = await createPasskeyStore(server.db).add(
      server.db,
      {
        userId,
        credentialId: key.id,
        publicKey: key.publicKey,
        counter,
        transports: ['internal'],
        backedUp: false,
        name: 'Soft key',
      },
      Date.now(),
    );
    return { userId, key, passkeyId: id ?? '' };
  }

  /** The options, then the assertion posted as next-auth/webauthn posts it. */
  async function signInWith(
    client: Client,
    key: SoftPasskey,
    { userVerified = true, counter = 1 } = {},
  ) {
    const got = (await (await client.get(`${options}?action=authenticate`)).json()) as {
      options: { challenge: string };
    };
    const data = key.assert({
      challenge: got.options.challenge,
      origin: server.url,
      userVerified,
      counter,
    });
    const fields = { csrfToken: await client.csrfToken(), action: 'authenticate', data };
    // What the request carries: the CSRF pair and the challenge cookie.
    const cookie = client.cookieHeader();
    const answer = await client.postForm('/api/auth/callback/passkey', fields, {
      'x-auth-return-redirect': '1',
    });
    return { answer, fields, cookie };
  }

  const proofsOf = (userId: string) => proofsIn(server.db, userId);

  const refused = () => ({ url: `${server.url}/api/auth/error?error=WebAuthnVerificationError` });

  it('signs in with user verification as both factors, without it as a password does', async () => {
    const { userId, key } = await enrolled('uv@example.com');
    const client = new Client(server.url);
    const { answer } = await signInWith(client, key);
    expect([answer.status, await answer.json()]).toEqual([200, { url: server.url }]);
    expect(await client.session()).toMatchObject({ user: { id: userId, email: 'uv@example.com' } });
    const other = new Client(server.url);
    const plain = await signInWith(other, key, { userVerified: false, counter: 2 });
    expect(plain.answer.status).toBe(200);
    expect((await proofsOf(userId)).sort()).toEqual(['passkey', 'passkey user_verification']);
    const listed = await createPasskeyStore(server.db).list(userId);
    expect(listed[0]?.lastUsedAt).not.toBeNull();
  });

  it('accepts an assertion once: the same body and challenge cookie again are refused', async () => {
    const { userId, key } = await enrolled('replay@example.com');
    const { answer, fields, cookie } = await signInWith(new Client(server.url), key);
    expect(answer.status).toBe(200);
    expect(await proofsOf(userId)).toHaveLength(1);
    const replay = await fetch(`${server.url}/api/auth/callback/passkey`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-auth-return-redirect': '1',
        cookie,
      },
      body: new URLSearchParams(fields).toString(),
    });
    expect(await replay.json()).toEqual(refused());
    expect(await proofsOf(userId)).toHaveLength(1);
  });

  it('refuses a counter that did not move on, a removed passkey and a disabled account', async () => {
    const cloned = await enrolled('clone@example.com', 5);
    const stale = await signInWith(new Client(server.url), cloned.key, { counter: 3 });
    expect(await stale.answer.json()).toEqual(refused());
    expect(await proofsOf(cloned.userId)).toEqual([]);

    const removed = await enrolled('removed@example.com');
    const owner = new Client(server.url);
    expect((await owner.signIn('removed@example.com', password)).status).toBe(200);
    const gone = await owner.request(`/api/account/passkeys/${removed.passkeyId}/remove`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': await owner.csrfToken() },
      body: '{}',
    });
    expect(gone.status).toBe(200);
    const afterRemoval = await signInWith(new Client(server.url), removed.key);
    expect(await afterRemoval.answer.json()).toEqual(refused());

    const disabled = await enrolled('disabled@example.com');
    await server.services.users.setDisabled(disabled.userId, true);
    const whileDisabled = await signInWith(new Client(server.url), disabled.key);
    expect(await whileDisabled.answer.json()).toEqual(refused());
    expect(await proofsOf(disabled.userId)).toEqual([]);
  });

  it('asks an account with a second factor for it after an assertion without user verification, and not after one with it', async () => {
    const { userId, key } = await enrolled('factor@example.com');
    // The account as TOTP reports it once enrolled (the factor's own folder registers it).
    const withTotp = { name: 'totp', summary: () => Promise.resolve({ totp: true }) };
    const check = async (userVerified: boolean, counter: number, required = false) => {
      const challenge = Buffer.from(`challenge-${counter}`).toString('base64url');
      const cookie = await sealChallenge([testSecret], false, { challenge }, Date.now());
      return checkAssertion(
        {
          passkeys: createPasskeyStore(server.db),
          users: server.services.users,
          secrets: [testSecret],
          factors: required ? [] : [withTotp],
          secondFactorRequired: required,
          throttle: server.services.throttle,
          now: () => Date.now(),
          log: { error: () => undefined },
        },
        {
          data: key.assert({
            challenge,
            origin: server.url,
            userVerified,
            counter,
          }),
          challengeCookie: decodeURIComponent(
            cookie.slice(cookie.indexOf('=') + 1, cookie.indexOf(';')),
          ),
          origin: server.url,
          secure: false,
          ip: '198.51.100.7',
        },
      );
    };
    expect(await check(false, 1)).toEqual({
      outcome: 'refused',
      code: 'second_factor_required',
      userId,
      credentialVersion: 0,
    });
    expect(await check(true, 2)).toMatchObject({
      outcome: 'right',
      proofs: ['passkey', 'user_verification'],
    });
    // SECOND_FACTOR=required and no other factor: without UV possession alone is one factor (it
    // signs in only after the password); with UV the passkey proved both.
    expect(await check(false, 3, true)).toEqual({
      outcome: 'refused',
      code: 'passkey_unverified',
      userId,
      credentialVersion: 0,
    });
    expect(await check(true, 4, true)).toMatchObject({
      outcome: 'right',
      proofs: ['passkey', 'user_verification'],
    });
  });

  it('throttles wrong assertions per address as wrong passwords are', async () => {
    const client = new Client(server.url);
    let last: Response | undefined;
    for (let i = 0; i < 12; i += 1) {
      last = await client.postForm(
        '/api/auth/callback/passkey',
        { csrfToken: await client.csrfToken(), action: 'authenticate', data: '{"id":"AAAA"}' },
        { 'x-auth-return-redirect': '1' },
      );
      if (last.status === 429) break;
    }
    expect(last?.status).toBe(429);
    expect(last?.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    expect(await last?.json()).toEqual({
      url: expect.stringContaining('error=CredentialsSignin&code=rate_limited'),
    });
  });
});

const backends = [
  { name: 'SQLite', databaseUrl: undefined, skip: false },
  { name: 'PostgreSQL', databaseUrl: 'postgres', skip: !hasPostgres },
];

describe.each(backends)('the passkey store on $name', ({ databaseUrl, skip }) => {
  let server: TestServer;
  let drop = async () => undefined as void;

  beforeAll(async () => {
    if (skip) return;
    let url: string | undefined;
    if (databaseUrl !== undefined) {
      const database = await createTestDatabase();
      url = database.url;
      drop = () => database.drop();
    }
    server = await startServer(url === undefined ? {} : { databaseUrl: url });
  });
  afterAll(async () => {
    await server?.close();
    await drop();
  });

  it.skipIf(skip)(
    'accepts a challenge once, even when 20 answers race, and forgets it only after its expiry',
    async () => {
      const store = createPasskeyStore(server.db);
      const at = Date.now();
      const results = await Promise.all(
        Array.from({ length: 20 }, () => store.spendChallenge('digest-1', at + 1000)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      await store.prune(at);
      expect(await store.spendChallenge('digest-1', at + 1000)).toBe(false);
      await store.prune(at + 1001);
      expect(await store.spendChallenge('digest-1', at + 1000)).toBe(true);
    },
  );

  it.skipIf(skip)(
    'moves a signature counter on only from the value an assertion was checked against',
    async () => {
      const store = createPasskeyStore(server.db);
      const userId = await addUser(server, `counter-${Date.now()}@example.com`, password);
      const id = await store.add(
        server.db,
        {
          userId,
          credentialId: 'cred-counter',
          publicKey: 'AAAA',
          counter: 5,
          transports: [],
          backedUp: false,
          name: 'Key',
        },
        Date.now(),
      );
      expect(id).not.toBeNull();
      const both = await Promise.all([
        store.used(id ?? '', 5, 6, 1),
        store.used(id ?? '', 5, 6, 2),
      ]);
      expect(both.filter(Boolean)).toHaveLength(1);
      expect(await store.findByCredentialId('cred-counter')).toMatchObject({ counter: 6, userId });
      // One credential is one passkey, whoever registers it again.
      expect(
        await store.add(
          server.db,
          {
            userId,
            credentialId: 'cred-counter',
            publicKey: 'BBBB',
            counter: 0,
            transports: [],
            backedUp: false,
            name: 'Again',
          },
          Date.now(),
        ),
      ).toBeNull();
    },
  );
});
