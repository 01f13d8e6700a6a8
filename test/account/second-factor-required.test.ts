import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPasskey } from '../../src/account/passkeys/enrolment.js';
import { createPasskeyStore } from '../../src/account/passkeys/passkey-store.js';
import { pagePathsUnder } from '../../src/account/paths.js';
import { resetSecondFactor } from '../../src/operator/operations.js';
import { capturedMail } from '../helpers/captured-mail.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { softPasskey, storedSoftPasskey, type SoftPasskey } from '../helpers/soft-passkey.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../helpers/postgres.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { browser, follow, hidden, noticeOf, submitSignInForm } from '../pages/page-helpers.js';
import {
  base,
  codeAt,
  proofsOf as proofsIn,
  refusalCode,
  wrongCode,
} from '../helpers/totp-codes.js';

/*
 * SECOND_FACTOR=required over real HTTP on a real database: a right password of an account
 * without a second factor gives no session but the enrolment step (the challenge stands for the
 * password) and a code mailed to the account's address; that code with a right code of the app
 * turns TOTP on, shows the recovery codes once and signs in (what the mailed code adds is
 * tested in signin-enrolment-code.test.ts). The service's clock is fixed, so a test says which
 * 30-second step each code belongs to.
 */

const password = 'correct horse battery staple';

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
  const mail = capturedMail();
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
        mail: mail.queue,
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

  const proofsOf = (userId: string) => proofsIn(server.db, userId);

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
      expect(step).toContain('name="emailCode"');
      expect(step).toContain(`Code from the mail we sent to ${email}`);
      expect(noticeOf(step)?.role).toBe('status');
      const key = keyOf(step);
      expect(key).not.toBe('');
      // Reloading shows the same key: it belongs to the challenge.
      expect(keyOf(await follow(client, first))).toBe(key);

      const post = (otp: string) =>
        client.postForm('/api/auth/callback/credentials', {
          csrfToken: hidden(step, 'csrfToken'),
          callbackUrl: hidden(step, 'callbackUrl'),
          emailCode: mail.enrolmentCode(email),
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
        { csrfToken, otp: codeAt(key, 0), emailCode: mail.enrolmentCode(email) },
        { 'x-auth-return-redirect': '1' },
      );
      expect(enrolled.status).toBe(200);
      const body = (await enrolled.json()) as { url: string; recoveryCodes: string[] };
      expect(new URL(body.url).searchParams.get('error')).toBeNull();
      expect(body.recoveryCodes).toHaveLength(10);
      expect(client.sessionCookie()).toBeDefined();
      // Stock signIn ignores those codes: /account asks for new ones until they are made there.
      const prompt = 'Your recovery codes were shown only once';
      expect(await (await client.get('/account', { accept: 'text/html' })).text()).toContain(
        prompt,
      );
      expect((await postJson(client, '/api/account/recovery-codes')).status).toBe(200);
      expect(await (await client.get('/account', { accept: 'text/html' })).text()).not.toContain(
        prompt,
      );
    },
  );

  /** A browser holding `from`'s cookies (its challenge among them). */
  function cloneOf(from: Client): Client {
    const clone = new Client(server.url);
    for (const [name, value] of from.cookies) clone.cookies.set(name, value);
    return clone;
  }

  /** A password sign-in refused for enrolment, and the key its challenge enrols. */
  async function enrolmentStep(email: string) {
    const client = new Client(server.url);
    expect(await refusalCode(await client.signIn(email, password))).toBe(
      'second_factor_enrolment_required',
    );
    const answer = await client.get('/api/auth/enrolment/totp');
    expect(answer.status).toBe(200);
    const key = ((await answer.json()) as { secret: string }).secret;
    return { client, key, code: mail.enrolmentCode(email) };
  }

  const postCode = async (client: Client, otp: string, emailCode: string, csrfToken?: string) =>
    client.postForm(
      '/api/auth/callback/credentials',
      { csrfToken: csrfToken ?? (await client.csrfToken()), otp, emailCode },
      { 'x-auth-return-redirect': '1' },
    );

  const signedIn = async (response: Response) =>
    response.status === 200 && (await refusalCode(response.clone())) === null;

  it.skipIf(skip)(
    'ten posts of one challenge with the right code at once: one session, one set of codes; the challenge is spent after',
    async () => {
      const { email, userId } = await newAccount();
      const { client, key, code } = await enrolmentStep(email);
      const csrfToken = await client.csrfToken();
      const browsers = Array.from({ length: 10 }, () => cloneOf(client));
      const answers = await Promise.all(
        browsers.map((one) => postCode(one, codeAt(key, 0), code, csrfToken)),
      );
      const wins = (await Promise.all(answers.map(signedIn))).filter(Boolean);
      expect(wins).toHaveLength(1);
      expect(await proofsOf(userId)).toEqual(['password otp']);
      const codes = await server.db
        .selectFrom('recovery_codes')
        .select('code_hash')
        .where('user_id', '=', userId)
        .execute();
      expect(codes).toHaveLength(10);
      // The challenge enrolled once: with the next step's code it signs nobody in.
      const again = cloneOf(client);
      expect(await signedIn(await postCode(again, codeAt(key, 1), code))).toBe(false);
      expect(again.sessionCookie()).toBeUndefined();
    },
  );

  it.skipIf(skip)(
    'a challenge is taken for what it was issued for: a password change, a passkey added or an operator reset voids it',
    async () => {
      // A password change since (the credential version moves) voids the enrolment challenge.
      const first = await newAccount();
      const changed = await enrolmentStep(first.email);
      await server.db
        .updateTable('users')
        .set((eb) => ({ credential_version: eb('credential_version', '+', 1) }))
        .where('id', '=', first.userId)
        .execute();
      expect((await changed.client.get('/api/auth/enrolment/totp')).status).toBe(401);
      expect(
        await signedIn(await postCode(changed.client, codeAt(changed.key, 0), changed.code)),
      ).toBe(false);

      // A passkey added while the enrolment challenge is live: it enrols nothing.
      const second = await newAccount();
      const live = await enrolmentStep(second.email);
      const key = softPasskey();
      await addPasskey(
        { db: server.db, store: createPasskeyStore(server.db), mail: undefined, now: () => base },
        { id: second.userId, email: second.email, name: 'Grace', credentialVersion: 0 },
        {
          credentialId: key.id,
          publicKey: key.publicKey,
          counter: 0,
          transports: ['internal'],
          backedUp: false,
          name: 'Soft key',
        },
        { ip: '127.0.0.1', device: '', origin: server.url, pages: pagePathsUnder(undefined) },
      );
      expect((await live.client.get('/api/auth/enrolment/totp')).status).toBe(401);
      expect(await signedIn(await postCode(live.client, codeAt(live.key, 0), live.code))).toBe(
        false,
      );
      expect(live.client.sessionCookie()).toBeUndefined();
      const factors = await server.db
        .selectFrom('user_totp')
        .select('secret')
        .where('user_id', '=', second.userId)
        .executeTakeFirst();
      expect(factors?.secret ?? null).toBeNull();

      // An account with TOTP: its challenge is the code step's, never an enrolment's; an
      // operator's reset voids it.
      const third = await newAccount();
      const enrolled = await enrolmentStep(third.email);
      expect(
        await signedIn(await postCode(enrolled.client, codeAt(enrolled.key, 0), enrolled.code)),
      ).toBe(true);
      const holder = new Client(server.url);
      expect(await refusalCode(await holder.signIn(third.email, password))).toBe(
        'second_factor_required',
      );
      const noKey = await holder.get('/api/auth/enrolment/totp');
      expect(noKey.status).toBe(401);
      expect(await errorCode(noKey)).toBe('unauthenticated');
      await resetSecondFactor(
        { db: server.db, now: () => base },
        { userId: third.userId, actor: { label: 'gatehouse CLI' } },
      );
      expect(await signedIn(await postCode(holder, codeAt(enrolled.key, 1), enrolled.code))).toBe(
        false,
      );
      expect((await holder.get('/api/auth/enrolment/totp')).status).toBe(401);
      expect(holder.sessionCookie()).toBeUndefined();
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

  const withPasskey = (userId: string, name = 'Soft key') =>
    storedSoftPasskey(server.db, userId, { name, at: base });

  it.skipIf(skip)(
    'an account whose second factor is a passkey: the password alone is passkey_required, a passkey without user verification signs in only after the password, its last passkey stays',
    async () => {
      const { email, userId } = await newAccount();
      const { key, id: passkeyId } = await withPasskey(userId);
      const byPassword = new Client(server.url);
      expect(await refusalCode(await byPassword.signIn(email, password))).toBe('passkey_required');
      expect(byPassword.sessionCookie()).toBeUndefined();
      // Its challenge waits for the passkey: it enrols no app of the password holder's.
      expect(byPassword.cookies.get('gatehouse.second-step')).toMatch(/^[\w-]{43}$/);
      expect((await byPassword.get('/api/auth/enrolment/totp')).status).toBe(401);
      expect(await refusalCode(await postCode(byPassword, '123456', 'ABCDEFGH'))).toBe(
        'passkey_required',
      );

      // Possession alone (a security key without its PIN) is one factor: refused, nothing to enrol.
      const withoutUv = new Client(server.url);
      expect(await refusalCode(await passkeySignIn(withoutUv, key, false, 1))).toBe(
        'passkey_unverified',
      );
      expect(withoutUv.sessionCookie()).toBeUndefined();
      expect(withoutUv.cookies.get('gatehouse.second-step')).toBeUndefined();

      // After the password, in the same browser, the same passkey is the second factor.
      expect((await passkeySignIn(byPassword, key, false, 2)).status).toBe(200);
      expect(byPassword.sessionCookie()).toBeDefined();
      expect(await proofsOf(userId)).toEqual(['password passkey']);

      const withUv = new Client(server.url);
      expect((await passkeySignIn(withUv, key, true, 3)).status).toBe(200);
      expect(withUv.sessionCookie()).toBeDefined();
      expect((await proofsOf(userId)).sort()).toEqual([
        'passkey user_verification',
        'password passkey',
      ]);
      const missing = await postJson(withUv, `/api/account/passkeys/${randomUUID()}/remove`);
      expect(missing.status).toBe(404);
      const removed = await postJson(withUv, `/api/account/passkeys/${passkeyId}/remove`);
      expect(removed.status).toBe(409);
      expect(await errorCode(removed)).toBe('last_second_factor');
      // TOTP that is not on is refused as ever.
      const off = await postJson(withUv, '/api/account/totp/disable', { code: '123456' });
      expect(off.status).toBe(400);
      expect(await errorCode(off)).toBe('invalid_code');

      // Two removals racing for the last two passkeys: one goes, one stays.
      const other = await withPasskey(userId, 'Second key');
      const both = await Promise.all(
        [passkeyId, other.id].map((id) => postJson(withUv, `/api/account/passkeys/${id}/remove`)),
      );
      expect(both.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(await createPasskeyStore(server.db).count(userId)).toBe(1);
    },
  );

  it.skipIf(skip)(
    'an account that lost its only passkey: the operator removes the passkeys too, and the next password sign-in enrols',
    async () => {
      const { email, userId } = await newAccount();
      await withPasskey(userId);
      const reset = await resetSecondFactor(
        { db: server.db, now: () => base },
        { userId, actor: { label: 'gatehouse CLI' }, methods: ['passkeys'] },
      );
      expect(reset).toMatchObject({ changed: true });
      expect(await createPasskeyStore(server.db).count(userId)).toBe(0);
      const events = await server.db
        .selectFrom('account_events')
        .select('type')
        .where('user_id', '=', userId)
        .execute();
      expect(events.map((event) => event.type)).toContain('passkey_removed');
      expect(await refusalCode(await new Client(server.url).signIn(email, password))).toBe(
        'second_factor_enrolment_required',
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
            {
              csrfToken: await client.csrfToken(),
              otp: codeAt(key, 0),
              emailCode: mail.enrolmentCode(email),
            },
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
