import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPasskeyStore } from '../../src/account/passkeys/passkey-store.js';
import { resetSecondFactor } from '../../src/operator/operations.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { softPasskey, type SoftPasskey } from '../helpers/soft-passkey.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../helpers/postgres.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { browser, follow, hidden, noticeOf, submitSignInForm } from '../pages/page-helpers.js';

/*
 * SECOND_FACTOR=required over real HTTP on a real database: a right password of an account
 * without a second factor gives no session but the enrolment step (the challenge stands for the
 * password), whose right code turns TOTP on, shows the recovery codes once and signs in. The
 * service's clock is fixed, so a test says which 30-second step each code belongs to.
 */

const password = 'correct horse battery staple';
const stepMs = 30_000;
const base = Math.floor(Date.now() / stepMs) * stepMs + stepMs / 2;

const codeAt = (secret: string, step: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: base + step * stepMs });

function wrongCode(secret: string, step: number): string {
  const right = new Set([-1, 0, 1].map((delta) => codeAt(secret, step + delta)));
  for (let n = 0; ; n += 1) {
    const candidate = String(n).padStart(6, '0');
    if (!right.has(candidate)) return candidate;
  }
}

async function refusalCode(response: Response): Promise<string | null> {
  const { url } = (await response.json()) as { url: string };
  return new URL(url).searchParams.get('code');
}

const keyOf = (page: string) => /<code>([A-Z2-7]{32})<\/code>/.exec(page)?.[1] ?? '';

async function postJson(client: Client, path: string, body: Record<string, unknown> = {}) {
  const csrfToken = await client.csrfToken();
  return client.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ csrfToken, ...body }),
  });
}

const errorCode = async (response: Response) =>
  ((await response.json()) as { error: { code: string } }).error.code;

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('SECOND_FACTOR=required on %s', (_, postgres) => {
  const skip = !firstPass || (postgres && !hasPostgres);
  let database: TestDatabase | undefined;
  let server: TestServer;
  let accounts = 0;
  /** Set: the user store's reads fail as a database that does not answer. */
  let storeDown = false;

  beforeAll(async () => {
    if (skip) return;
    if (postgres) database = await createTestDatabase();
    server = await startServer({
      databaseUrl: database?.url,
      now: () => base,
      config: { secondFactor: { mode: 'required', keys: [] } },
      wrap: (deps) => ({
        ...deps,
        users: {
          ...deps.users,
          findById: (id) =>
            storeDown ? Promise.reject(new Error('connection refused')) : deps.users.findById(id),
        },
      }),
    });
  });
  afterAll(async () => {
    if (skip) return;
    await server.close();
    await database?.drop();
  });

  async function newAccount() {
    accounts += 1;
    const email = `grace${accounts}@example.com`;
    const userId = await addUser(server, email, password, 'Grace');
    return { email, userId };
  }

  const proofsOf = async (userId: string) =>
    (
      await server.db
        .selectFrom('sessions')
        .select('proofs')
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .execute()
    ).map((row) => row.proofs);

  it.skipIf(skip)(
    'a right password without a second factor gets second_factor_enrolment_required, a challenge and no session',
    async () => {
      const { email, userId } = await newAccount();
      const client = new Client(server.url);
      const refused = await client.signIn(email, password);
      expect(await refusalCode(refused)).toBe('second_factor_enrolment_required');
      expect(client.sessionCookie()).toBeUndefined();
      expect(client.cookies.get('gatehouse.second-step')).toMatch(/^[\w-]{43}$/);
      expect(await client.session()).toBeNull();
      expect(await proofsOf(userId)).toEqual([]);
      // A wrong password is the same refusal as ever: nothing about enrolment.
      expect(await refusalCode(await new Client(server.url).signIn(email, 'wrong password!'))).toBe(
        'credentials',
      );
    },
  );

  it.skipIf(skip)(
    'the sign-in page enrols without the password again: QR code and key, a wrong code refused, a right one turns TOTP on, shows the recovery codes once and signs in',
    async () => {
      const { email, userId } = await newAccount();
      const client = browser(server);
      const first = await submitSignInForm(client, { email, password });
      expect(first.status).toBe(302);
      expect(first.headers.get('location')).toContain('code=second_factor_enrolment_required');
      const step = await follow(client, first);
      expect(step).toContain('<svg');
      expect(step).not.toContain('name="password"');
      expect(step).toContain('name="otp"');
      expect(noticeOf(step)?.role).toBe('status');
      const key = keyOf(step);
      expect(key).not.toBe('');
      // Reloading shows the same key: it belongs to the challenge.
      expect(keyOf(await follow(client, first))).toBe(key);

      const post = (otp: string) =>
        client.postForm('/api/auth/callback/credentials', {
          csrfToken: hidden(step, 'csrfToken'),
          callbackUrl: hidden(step, 'callbackUrl'),
          otp,
        });
      const wrong = await post(wrongCode(key, 0));
      expect(wrong.headers.get('location')).toContain('code=second_factor_invalid');
      expect(client.sessionCookie()).toBeUndefined();
      const again = await follow(client, wrong);
      expect(noticeOf(again)?.role).toBe('alert');
      expect(keyOf(again)).toBe(key);

      const right = await post(codeAt(key, 0));
      expect(right.status).toBe(200);
      // The recovery codes are in this answer alone: never kept by a cache.
      expect(right.headers.get('cache-control')).toBe('no-store');
      expect(right.headers.get('content-security-policy')).toContain("default-src 'none'");
      const done = await right.text();
      const codes = [...done.matchAll(/<li><code>([0-9a-z-]{19})<\/code><\/li>/g)].map(
        (match) => match[1],
      );
      expect(codes).toHaveLength(10);
      expect(done).toContain('download="recovery-codes.txt"');
      expect(done).toMatch(/<a class="button" href="http:\/\/127\.0\.0\.1:\d+[^"]*">Continue<\/a>/);
      expect(client.sessionCookie()).toBeDefined();
      expect(client.cookies.get('gatehouse.second-step') ?? '').toBe('');
      expect(await client.session()).toMatchObject({ user: { email } });
      expect(await proofsOf(userId)).toEqual(['password otp']);
      const account = (await (await client.get('/api/account')).json()) as {
        secondFactors: unknown;
      };
      expect(account.secondFactors).toEqual({ totp: true, passkeys: 0, recoveryCodes: 10 });

      // From now on a sign-in asks for the code as any account with TOTP, and takes it.
      expect(await refusalCode(await new Client(server.url).signIn(email, password))).toBe(
        'second_factor_required',
      );
      const next = new Client(server.url);
      const signedIn = await next.signIn(email, password, undefined, { otp: codeAt(key, 1) });
      expect(signedIn.status).toBe(200);
      expect(next.sessionCookie()).toBeDefined();

      // Its one factor cannot be turned off while every account needs one.
      const off = await postJson(client, '/api/account/totp/disable', { code: codeAt(key, -1) });
      expect(off.status).toBe(409);
      expect(await errorCode(off)).toBe('last_second_factor');
      const page = await (await client.get('/account')).text();
      const refusedForm = await client.postForm('/account/totp/disable', {
        csrfToken: hidden(page, 'csrfToken'),
        currentPassword: password,
        code: codeAt(key, -1),
      });
      expect(refusedForm.status).toBe(409);
      expect(await refusedForm.text()).toContain('every account here needs a second factor');
    },
  );

  it.skipIf(skip)(
    'an app enrols with the challenge through the credentials callback and gets the recovery codes beside its url',
    async () => {
      const { email } = await newAccount();
      const client = new Client(server.url);
      expect(await refusalCode(await client.signIn(email, password))).toBe(
        'second_factor_enrolment_required',
      );
      const keyAnswer = await client.get('/api/auth/enrolment/totp');
      expect(keyAnswer.status).toBe(200);
      expect(keyAnswer.headers.get('cache-control')).toBe('no-store');
      const { secret: key, uri, qrSvg } = (await keyAnswer.json()) as Record<string, string>;
      expect(uri).toContain(`secret=${key}`);
      expect(qrSvg).toMatch(/^<svg/);
      // Without the challenge there is nothing to enrol.
      const none = await new Client(server.url).get('/api/auth/enrolment/totp');
      expect(none.status).toBe(401);
      expect(await errorCode(none)).toBe('unauthenticated');
      const csrfToken = await client.csrfToken();
      const enrolled = await client.postForm(
        '/api/auth/callback/credentials',
        { csrfToken, otp: codeAt(key, 0) },
        { 'x-auth-return-redirect': '1' },
      );
      expect(enrolled.status).toBe(200);
      const body = (await enrolled.json()) as { url: string; recoveryCodes: string[] };
      expect(new URL(body.url).searchParams.get('error')).toBeNull();
      expect(body.recoveryCodes).toHaveLength(10);
      expect(client.sessionCookie()).toBeDefined();
    },
  );

  it.skipIf(skip)(
    'the enrolment key while the database does not answer: 503 on the page and the API, no stack',
    async () => {
      const { email } = await newAccount();
      const client = new Client(server.url);
      await client.signIn(email, password);
      storeDown = true;
      try {
        const page = await client.get(
          '/api/auth/signin?error=CredentialsSignin&code=second_factor_enrolment_required',
        );
        expect(page.status).toBe(503);
        expect(page.headers.get('retry-after')).toBe('5');
        expect(await errorCode(page)).toBe('unavailable');
        const api = await client.get('/api/auth/enrolment/totp');
        expect(api.status).toBe(503);
        expect(await api.text()).not.toContain('connection refused');
      } finally {
        storeDown = false;
      }
      expect((await client.get('/api/auth/enrolment/totp')).status).toBe(200);
    },
  );

  /** The options, then the assertion posted as next-auth/webauthn posts it. */
  async function passkeySignIn(
    client: Client,
    key: SoftPasskey,
    userVerified: boolean,
    counter: number,
  ) {
    const got = (await (
      await client.get('/api/auth/webauthn-options/passkey?action=authenticate')
    ).json()) as { options: { challenge: string } };
    const data = key.assert({
      challenge: got.options.challenge,
      origin: server.url,
      userVerified,
      counter,
    });
    return client.postForm(
      '/api/auth/callback/passkey',
      { csrfToken: await client.csrfToken(), action: 'authenticate', data },
      { 'x-auth-return-redirect': '1' },
    );
  }

  it.skipIf(skip)(
    'an account whose second factor is a passkey: the password alone is passkey_required, a passkey without user verification enrols an app, with it signs in; its last passkey stays',
    async () => {
      const { email, userId } = await newAccount();
      const key = softPasskey();
      const passkeyId = await createPasskeyStore(server.db).add(
        server.db,
        {
          userId,
          credentialId: key.id,
          publicKey: key.publicKey,
          counter: 0,
          transports: ['internal'],
          backedUp: false,
          name: 'Soft key',
        },
        base,
      );
      const byPassword = new Client(server.url);
      expect(await refusalCode(await byPassword.signIn(email, password))).toBe('passkey_required');
      expect(byPassword.cookies.get('gatehouse.second-step')).toBeUndefined();
      expect(byPassword.sessionCookie()).toBeUndefined();

      const withoutUv = new Client(server.url);
      const uvLess = await passkeySignIn(withoutUv, key, false, 1);
      expect(await refusalCode(uvLess)).toBe('second_factor_enrolment_required');
      expect(withoutUv.sessionCookie()).toBeUndefined();
      expect(withoutUv.cookies.get('gatehouse.second-step')).toMatch(/^[\w-]{43}$/);

      const withUv = new Client(server.url);
      expect((await passkeySignIn(withUv, key, true, 2)).status).toBe(200);
      expect(withUv.sessionCookie()).toBeDefined();
      expect(await proofsOf(userId)).toEqual(['passkey user_verification']);
      const removed = await postJson(withUv, `/api/account/passkeys/${passkeyId}/remove`);
      expect(removed.status).toBe(409);
      expect(await errorCode(removed)).toBe('last_second_factor');

      // The challenge the UV-less passkey left enrols an app (that passkey proved one factor).
      const step = await (
        await withoutUv.get(
          '/api/auth/signin?error=CredentialsSignin&code=second_factor_enrolment_required',
        )
      ).text();
      const enrolled = await withoutUv.postForm(
        '/api/auth/callback/credentials',
        { csrfToken: await withoutUv.csrfToken(), otp: codeAt(keyOf(step), 0) },
        { 'x-auth-return-redirect': '1' },
      );
      expect(enrolled.status).toBe(200);
      expect(withoutUv.sessionCookie()).toBeDefined();
      // With TOTP on too, the passkey may go.
      expect((await postJson(withUv, `/api/account/passkeys/${passkeyId}/remove`)).status).toBe(
        200,
      );
    },
  );

  it.skipIf(skip)(
    'after the operator resets the second factor the next sign-in leads to enrolment again',
    async () => {
      const { email, userId } = await newAccount();
      const client = new Client(server.url);
      await client.signIn(email, password);
      const key = keyOf(
        await (
          await client.get(
            '/api/auth/signin?error=CredentialsSignin&code=second_factor_enrolment_required',
          )
        ).text(),
      );
      expect(
        (
          await client.postForm(
            '/api/auth/callback/credentials',
            { csrfToken: await client.csrfToken(), otp: codeAt(key, 0) },
            { 'x-auth-return-redirect': '1' },
          )
        ).status,
      ).toBe(200);
      const reset = await resetSecondFactor(
        { db: server.db, now: () => base },
        { userId, actor: { label: 'gatehouse CLI' } },
      );
      expect(reset).toMatchObject({ changed: true });
      // A session from before lives on to its end (the session read is unchanged); its /account
      // page asks for the set-up.
      expect(await client.session()).toMatchObject({ user: { email } });
      const page = await (await client.get('/account', { accept: 'text/html' })).text();
      expect(page).toContain('Every account here needs two-step sign-in now.');
      expect(await refusalCode(await new Client(server.url).signIn(email, password))).toBe(
        'second_factor_enrolment_required',
      );
    },
  );
});

describe.skipIf(!firstPass)('SECOND_FACTOR unset', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ now: () => base });
  });
  afterAll(async () => {
    await server.close();
  });

  it('a password alone signs in, and the last factor may be turned off', async () => {
    const email = 'linus@example.com';
    await addUser(server, email, password, 'Linus');
    const client = new Client(server.url);
    expect((await client.signIn(email, password)).status).toBe(200);
    expect(client.sessionCookie()).toBeDefined();
    const setup = await postJson(client, '/api/account/totp/setup');
    const { secret } = (await setup.json()) as { secret: string };
    expect(
      (await postJson(client, '/api/account/totp/confirm', { code: codeAt(secret, 0) })).status,
    ).toBe(200);
    const off = await postJson(client, '/api/account/totp/disable', { code: codeAt(secret, 1) });
    expect(off.status).toBe(200);
  });
});
