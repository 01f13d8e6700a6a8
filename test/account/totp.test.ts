import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issue } from '../../src/account/model/secrets.js';
import { resetSecondFactor } from '../../src/operator/operations.js';
import { capturedMail } from '../helpers/captured-mail.js';
import { Client } from '../helpers/client.js';
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
 * TOTP and recovery codes over real HTTP on a real database (SQLite, and PostgreSQL under
 * scripts/with-postgres.sh), with the service's clock injected so a test says which 30-second
 * step each code belongs to: the step the confirming code used, the next one, and so on.
 */

const password = 'correct horse battery staple';

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('TOTP and recovery codes on %s', (_, postgres) => {
  const skip = postgres && !hasPostgres;
  let database: TestDatabase | undefined;
  let server: TestServer;
  const { mails, queue: mail } = capturedMail();
  let accounts = 0;

  beforeAll(async () => {
    if (skip) return;
    if (postgres) database = await createTestDatabase();
    server = await startServer({
      databaseUrl: database?.url,
      now: () => base,
      // Twenty wrong codes at once must not lock the account the right one belongs to.
      throttle: { emailMaxFailures: 100 },
      wrap: (deps) => ({ ...deps, mail }),
    });
  });
  afterAll(async () => {
    if (skip) return;
    await server.close();
    await database?.drop();
  });

  async function post(client: Client, path: string, body: Record<string, unknown> = {}) {
    const csrfToken = await client.csrfToken();
    return client.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ csrfToken, ...body }),
    });
  }

  async function newAccount() {
    accounts += 1;
    const email = `ada${accounts}@example.com`;
    const userId = await addUser(server, email, password, 'Ada');
    const client = new Client(server.url);
    expect((await client.signIn(email, password)).status).toBe(200);
    return { email, userId, client };
  }

  /** An account with TOTP on, confirmed with the code of `confirmStep`. */
  async function enrolled(confirmStep = 0) {
    const account = await newAccount();
    const setup = await post(account.client, '/api/account/totp/setup');
    expect(setup.status).toBe(200);
    const { secret } = (await setup.json()) as { secret: string };
    const confirmed = await post(account.client, '/api/account/totp/confirm', {
      code: codeAt(secret, confirmStep),
    });
    expect(confirmed.status).toBe(200);
    const { recoveryCodes } = (await confirmed.json()) as { recoveryCodes: string[] };
    return { ...account, secret, recoveryCodes };
  }

  const proofsOf = (userId: string) => proofsIn(server.db, userId);

  /**
   * A reset link's token for `user`, issued on the service's clock: asked for while TOTP was on
   * (reset-before-factor.test.ts has one asked for before).
   */
  const resetSecretOf = async (user: { id: string; email: string; credentialVersion: number }) =>
    (
      await issue(
        server.db,
        {
          purpose: 'reset',
          userId: user.id,
          email: user.email,
          credentialVersion: user.credentialVersion,
          ttlSeconds: 3600,
          withCode: false,
        },
        base,
      )
    ).token;

  it.skipIf(skip)(
    'set-up answers the secret, its otpauth URI and a QR code, and stays pending until a code confirms it',
    async () => {
      const { email, userId, client } = await newAccount();
      const setup = await post(client, '/api/account/totp/setup');
      expect(setup.status).toBe(200);
      expect(setup.headers.get('cache-control')).toBe('no-store');
      const body = (await setup.json()) as { secret: string; uri: string; qrSvg: string };
      expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(body.uri).toBe(
        `otpauth://totp/Gatehouse:${encodeURIComponent(email)}?issuer=Gatehouse&secret=${body.secret}&algorithm=SHA1&digits=6&period=30`,
      );
      expect(body.qrSvg).toMatch(/^<svg[\s\S]*<\/svg>$/);
      const summary = async () =>
        ((await (await client.get('/api/account')).json()) as { secondFactors: unknown })
          .secondFactors;
      expect(await summary()).toEqual({ totp: false, passkeys: 0, recoveryCodes: 0 });
      // Pending: the password alone still signs in.
      expect((await new Client(server.url).signIn(email, password)).status).toBe(200);

      const wrong = await post(client, '/api/account/totp/confirm', {
        code: wrongCode(body.secret, 0),
      });
      expect(wrong.status).toBe(400);
      expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('invalid_code');

      const confirmed = await post(client, '/api/account/totp/confirm', {
        code: codeAt(body.secret, 0),
      });
      expect(confirmed.status).toBe(200);
      const { recoveryCodes } = (await confirmed.json()) as { recoveryCodes: string[] };
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);
      // 16 characters of a 32-letter alphabet: 80 bits each.
      for (const code of recoveryCodes) expect(code).toMatch(/^[0-9a-z]{4}(-[0-9a-z]{4}){3}$/);
      expect(await summary()).toEqual({ totp: true, passkeys: 0, recoveryCodes: 10 });

      // Neither the secret nor a recovery code is in the database in clear.
      const stored = JSON.stringify([
        await server.db.selectFrom('user_totp').selectAll().where('user_id', '=', userId).execute(),
        await server.db
          .selectFrom('recovery_codes')
          .selectAll()
          .where('user_id', '=', userId)
          .execute(),
      ]);
      expect(stored).not.toContain(body.secret);
      for (const code of recoveryCodes) {
        expect(stored).not.toContain(code);
        expect(stored).not.toContain(code.replace(/-/g, ''));
      }
      const events = await server.db
        .selectFrom('account_events')
        .select('type')
        .where('user_id', '=', userId)
        .execute();
      expect(events.map((event) => event.type)).toContain('totp_enabled');
      expect(mails.find((sent) => sent.to === email)?.kind).toBe('second-factor-notice');
    },
  );

  it.skipIf(skip)(
    'sign-in asks for the code, refuses a wrong one, and accepts a step once, the confirming code included',
    async () => {
      const { email, userId, secret } = await enrolled(0);
      const signIn = (extra: Record<string, string>) =>
        new Client(server.url).signIn(email, password, undefined, extra);

      expect(await refusalCode(await signIn({}))).toBe('second_factor_required');
      expect(await refusalCode(await signIn({ otp: wrongCode(secret, 0) }))).toBe(
        'second_factor_invalid',
      );
      // The confirming code's step was accepted once already.
      expect(await refusalCode(await signIn({ otp: codeAt(secret, 0) }))).toBe(
        'second_factor_invalid',
      );
      const before = await proofsOf(userId);
      const client = new Client(server.url);
      const accepted = await client.signIn(email, password, undefined, {
        otp: codeAt(secret, 1),
      });
      expect(accepted.status).toBe(200);
      expect(client.sessionCookie()).toBeDefined();
      expect((await proofsOf(userId)).filter((proofs) => !before.includes(proofs))).toEqual([
        'password otp',
      ]);
      // The same code again: its step is spent.
      expect(await refusalCode(await signIn({ otp: codeAt(secret, 1) }))).toBe(
        'second_factor_invalid',
      );
      // A wrong password with a right code says nothing about the code.
      const wrongPassword = await new Client(server.url).signIn(
        email,
        'not the password',
        undefined,
        {
          otp: codeAt(secret, 1),
        },
      );
      expect(await refusalCode(wrongPassword)).toBe('credentials');
    },
  );

  it.skipIf(skip)(
    'twenty sign-ins sent at once with one valid code: exactly one gets a session',
    async () => {
      // Confirmed with the step before, so the current step is unspent.
      const { email, secret } = await enrolled(-1);
      const clients = Array.from({ length: 20 }, () => new Client(server.url));
      const answers = await Promise.all(
        clients.map((client) =>
          client.signIn(email, password, undefined, { otp: codeAt(secret, 0) }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      expect(clients.filter((client) => client.sessionCookie() !== undefined)).toHaveLength(1);
    },
  );

  it.skipIf(skip)(
    'a recovery code signs in once, in any order, and its notice says how many are left',
    async () => {
      const { email, userId, recoveryCodes } = await enrolled(0);
      const client = new Client(server.url);
      // The last one first, typed in capitals without its dashes.
      const typed = (recoveryCodes[9] ?? '').replace(/-/g, '').toUpperCase();
      const used = await client.signIn(email, password, undefined, { recoveryCode: typed });
      expect(used.status).toBe(200);
      expect(client.sessionCookie()).toBeDefined();
      expect(await proofsOf(userId)).toContain('password recovery_code');
      const again = await new Client(server.url).signIn(email, password, undefined, {
        recoveryCode: recoveryCodes[9] ?? '',
      });
      expect(await refusalCode(again)).toBe('second_factor_invalid');
      const account = (await (await client.get('/api/account')).json()) as {
        secondFactors: { recoveryCodes: number };
      };
      expect(account.secondFactors.recoveryCodes).toBe(9);
      const notice = mails.filter((sent) => sent.to === email).at(-1);
      expect(notice?.kind).toBe('second-factor-notice');
      expect(notice?.values.recoveryCodesLeft).toBe('9');
      expect(notice?.values.lockLink).toContain('/account/lock?token=');
      const events = await server.db
        .selectFrom('account_events')
        .select('type')
        .where('user_id', '=', userId)
        .execute();
      expect(events.map((event) => event.type)).toContain('recovery_code_used');
    },
  );

  it.skipIf(skip)(
    're-authentication asks for the code; regenerated codes void the old set; a code turns TOTP off',
    async () => {
      const { email, client, secret, recoveryCodes } = await enrolled(0);
      const reauth = (body: Record<string, string>) =>
        post(client, '/api/account/reauthenticate', { password, ...body });
      expect((await reauth({})).status).toBe(401);
      expect((await reauth({ otp: wrongCode(secret, 0) })).status).toBe(403);
      expect((await reauth({ otp: codeAt(secret, 1) })).status).toBe(200);

      const regenerated = await post(client, '/api/account/recovery-codes');
      expect(regenerated.status).toBe(200);
      const fresh = ((await regenerated.json()) as { recoveryCodes: string[] }).recoveryCodes;
      expect(fresh).toHaveLength(10);
      const old = await new Client(server.url).signIn(email, password, undefined, {
        recoveryCode: recoveryCodes[0] ?? '',
      });
      expect(await refusalCode(old)).toBe('second_factor_invalid');

      expect((await post(client, '/api/account/totp/disable', {})).status).toBe(400);
      const off = await post(client, '/api/account/totp/disable', { recoveryCode: fresh[3] });
      expect(off.status).toBe(200);
      expect((await new Client(server.url).signIn(email, password)).status).toBe(200);
      const account = (await (await client.get('/api/account')).json()) as {
        secondFactors: unknown;
      };
      expect(account.secondFactors).toEqual({ totp: false, passkeys: 0, recoveryCodes: 0 });
    },
  );

  it.skipIf(skip)(
    'a reset of an account with TOTP without the code changes nothing and keeps the link; with the code it works and ends every session',
    async () => {
      const { userId, client, secret } = await enrolled(0);
      const user = await server.services.users.findById(userId);
      if (user === null) throw new Error('no user');
      const token = await resetSecretOf(user);
      const anonymous = new Client(server.url);
      const newPassword = 'an entirely new passphrase';
      const reset = (extra: Record<string, string>) =>
        post(anonymous, '/api/account/password/reset', { token, password: newPassword, ...extra });

      const without = await reset({});
      expect(without.status).toBe(401);
      expect(((await without.json()) as { error: { code: string } }).error.code).toBe(
        'second_factor_required',
      );
      expect((await reset({ otp: wrongCode(secret, 0) })).status).toBe(403);
      const row = await server.db
        .selectFrom('account_tokens')
        .select('used_at')
        .where('user_id', '=', userId)
        .where('purpose', '=', 'reset')
        .executeTakeFirstOrThrow();
      expect(row.used_at).toBeNull();
      expect((await server.services.users.findById(userId))?.passwordHash).toBe(user.passwordHash);
      expect(((await client.session()) as { user?: unknown } | null)?.user).toBeDefined();

      const done = await reset({ otp: codeAt(secret, 1) });
      expect(done.status).toBe(200);
      expect(await client.session()).toBeNull();
      expect(await proofsOf(userId)).toEqual([]);
    },
  );

  it.skipIf(skip)(
    'the sign-in page asks for the code after a right password without the password again; the challenge signs in once',
    async () => {
      const { email, secret, recoveryCodes } = await enrolled(0);
      const client = browser(server);
      const first = await submitSignInForm(client, { email, password });
      expect(first.status).toBe(302);
      expect(first.headers.get('location')).toContain('code=second_factor_required');
      const challenge = client.cookies.get('gatehouse.second-step');
      expect(challenge).toMatch(/^[\w-]{43}$/);
      const step = await follow(client, first);
      expect(step).toContain('name="otp"');
      expect(step).not.toContain('name="password"');
      expect(noticeOf(step)?.role).toBe('status');

      const post = (fields: Record<string, string>) =>
        client.postForm('/api/auth/callback/credentials', {
          csrfToken: hidden(step, 'csrfToken'),
          callbackUrl: hidden(step, 'callbackUrl'),
          ...fields,
        });
      const wrong = await post({ otp: wrongCode(secret, 0) });
      expect(wrong.headers.get('location')).toContain('code=second_factor_invalid');
      const again = await follow(client, wrong);
      expect(noticeOf(again)?.role).toBe('alert');
      expect(again).toContain('name="otp"');

      const right = await post({ otp: codeAt(secret, 1) });
      expect(right.status).toBe(302);
      expect(right.headers.get('location')).not.toContain('error=');
      expect(client.sessionCookie()).toBeDefined();
      expect(client.cookies.get('gatehouse.second-step') ?? '').toBe('');

      // A copy of the spent challenge signs nobody in, even with a right recovery code.
      const copy = browser(server);
      copy.cookies.set('gatehouse.second-step', challenge ?? '');
      const page = await (await copy.get('/api/auth/signin')).text();
      const replay = await copy.postForm('/api/auth/callback/credentials', {
        csrfToken: hidden(page, 'csrfToken'),
        recoveryCode: recoveryCodes[0] ?? '',
      });
      expect(replay.headers.get('location')).toContain('error=CredentialsSignin');
      expect(copy.sessionCookie()).toBeUndefined();
    },
  );

  it.skipIf(skip)(
    'the /account page sets up TOTP without script: the password, the QR code and key, the code, then the recovery codes once',
    async () => {
      const { email, userId } = await newAccount();
      const client = browser(server);
      expect((await submitSignInForm(client, { email, password })).status).toBe(302);
      const page = await (await client.get('/account')).text();
      expect(page).toContain('action="/account/totp/setup"');
      const setup = await client.postForm('/account/totp/setup', {
        csrfToken: hidden(page, 'csrfToken'),
        currentPassword: password,
      });
      expect(setup.status).toBe(200);
      const enrol = await setup.text();
      expect(enrol).toContain('<svg');
      const key = /<code>([A-Z2-7]{32})<\/code>/.exec(enrol)?.[1] ?? '';
      expect(key).not.toBe('');
      const confirmed = await client.postForm('/account/totp/confirm', {
        csrfToken: hidden(enrol, 'csrfToken'),
        code: codeAt(key, 0),
      });
      expect(confirmed.status).toBe(200);
      const shown = await confirmed.text();
      const codes = [...shown.matchAll(/<li><code>([0-9a-z-]{19})<\/code><\/li>/g)];
      expect(codes).toHaveLength(10);
      expect(shown).toContain('download="recovery-codes.txt"');
      const again = await (await client.get('/account')).text();
      expect(again).not.toContain(codes[0]?.[1] ?? 'none');
      expect(again).toContain('10 recovery codes left');
      const row = await server.db
        .selectFrom('user_totp')
        .select('secret')
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      expect(row.secret).not.toBeNull();
    },
  );

  it.skipIf(skip)(
    'the reset page asks an account with TOTP for its code and keeps the link until it comes',
    async () => {
      const { userId, secret } = await enrolled(0);
      const user = await server.services.users.findById(userId);
      if (user === null) throw new Error('no user');
      const token = await resetSecretOf(user);
      const client = browser(server);
      const page = await (await client.get(`/account/password/reset?token=${token}`)).text();
      expect(page).not.toContain('name="otp"');
      const fields = {
        csrfToken: hidden(page, 'csrfToken'),
        token,
        password: 'a new passphrase here',
        passwordRepeat: 'a new passphrase here',
      };
      const asked = await client.postForm('/account/password/reset', fields);
      expect(asked.status).toBe(401);
      const again = await asked.text();
      expect(again).toContain('name="otp"');
      expect(hidden(again, 'token')).toBe(token);
      const done = await client.postForm('/account/password/reset', {
        ...fields,
        csrfToken: hidden(again, 'csrfToken'),
        otp: codeAt(secret, 1),
      });
      expect(done.status).toBe(200);
      expect((await server.services.users.findById(userId))?.passwordHash).not.toBe(
        user.passwordHash,
      );
    },
  );

  it.skipIf(skip)("the operator's reset-second-factor turns TOTP off and is recorded", async () => {
    const { email, userId } = await enrolled(0);
    const result = await resetSecondFactor(
      { db: server.db, now: () => Date.now() },
      { userId, actor: { label: 'gatehouse CLI' } },
    );
    expect(result !== 'missing' && result.changed).toBe(true);
    expect((await new Client(server.url).signIn(email, password)).status).toBe(200);
    const events = await server.db
      .selectFrom('account_events')
      .select(['type', 'device'])
      .where('user_id', '=', userId)
      .where('type', '=', 'totp_disabled')
      .execute();
    expect(events).toEqual([{ type: 'totp_disabled', device: 'gatehouse CLI' }]);
  });
});
