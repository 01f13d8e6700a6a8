import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailQueue, MailRequest } from '../../src/mail/mail-queue.js';
import { Client } from '../helpers/client.js';
import { errorCode, postWithCsrf } from '../helpers/account-requests.js';
import { databaseBackends } from '../helpers/backends.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { browser, hidden, noticeOf } from '../pages/page-helpers.js';
import { base, codeAt, refusalCode, wrongCode } from '../helpers/totp-codes.js';

/*
 * Moving two-step sign-in to a new authenticator app asks what turning it off asks: a code of
 * the current app or a recovery code, so whoever has only the password (and a recent session)
 * cannot put their own app in its place. Over real HTTP on SQLite and PostgreSQL, with the
 * service's clock fixed so each code says which 30-second step it belongs to.
 */

const password = 'correct horse battery staple';

const errorOf = async (response: Response) =>
  ((await response.json()) as { error: { code: string; message: string } }).error;

const backends = databaseBackends('totp-replace');

describe.each(backends)('replacing TOTP on $name', ({ skip, create }) => {
  let database: Awaited<ReturnType<typeof create>>;
  let server: TestServer;
  const mails: MailRequest[] = [];
  let accounts = 0;

  beforeAll(async () => {
    if (skip) return;
    database = await create();
    // The notices, as the outbox would get them.
    const enqueue: MailQueue['enqueue'] = async (_db, request) => void mails.push(request);
    server = await startServer({
      databaseUrl: database.url,
      now: () => base,
      wrap: (deps) => ({ ...deps, mail: { enabled: true, enqueue } }),
    });
  });
  afterAll(async () => {
    if (skip) return;
    await server.close();
    await database.dispose();
  });

  const post = (client: Client, path: string, body: Record<string, unknown> = {}) =>
    postWithCsrf(client, path, body);

  /**
   * An account with TOTP on, signed in on `client`: confirmed with the code of the step before
   * the clock's, so the clock's step and the next are unspent.
   */
  async function enrolled(client?: Client) {
    accounts += 1;
    const email = `replace${accounts}@example.com`;
    const userId = await addUser(server, email, password, 'Ada');
    const signedIn = client ?? new Client(server.url);
    expect((await signedIn.signIn(email, password)).status).toBe(200);
    const setup = await post(signedIn, '/api/account/totp/setup');
    expect(setup.status).toBe(200);
    const { secret } = (await setup.json()) as { secret: string };
    const confirmed = await post(signedIn, '/api/account/totp/confirm', {
      code: codeAt(secret, -1),
    });
    expect(confirmed.status).toBe(200);
    const { recoveryCodes } = (await confirmed.json()) as { recoveryCodes: string[] };
    return { email, userId, client: signedIn, secret, recoveryCodes };
  }

  const signInCode = async (email: string, otp: string) =>
    refusalCode(await new Client(server.url).signIn(email, password, undefined, { otp }));

  it.skipIf(skip)(
    "a set-up of an account with TOTP needs a code of the current app: without one, or with a wrong one, it is refused as disable refuses, and the old app stays the account's",
    async () => {
      const { email, client, secret } = await enrolled();
      const setUp = async (body: Record<string, unknown>) =>
        errorCode(await post(client, '/api/account/totp/setup', body));
      expect(await setUp({})).toBe('400 invalid_code');
      expect(await setUp({ code: wrongCode(secret, 1) })).toBe('400 invalid_code');
      expect(await setUp({ recoveryCode: 'aaaa-bbbb-cccc-dddd' })).toBe('400 invalid_code');
      // Nothing is pending, so nothing can be confirmed; the old app still signs in.
      const row = await server.db
        .selectFrom('user_totp')
        .select('pending_secret')
        .innerJoin('users', 'users.id', 'user_totp.user_id')
        .where('users.email', '=', email)
        .executeTakeFirstOrThrow();
      expect(row.pending_secret).toBeNull();
      expect(await signInCode(email, codeAt(secret, 1))).toBeNull();
    },
  );

  it.skipIf(skip)(
    'a right code of the current app moves it to the new one, even in the same 30 seconds; the old app no longer signs in',
    async () => {
      const { email, client, secret } = await enrolled();
      const setup = await post(client, '/api/account/totp/setup', { code: codeAt(secret, 0) });
      expect(setup.status).toBe(200);
      const fresh = ((await setup.json()) as { secret: string }).secret;
      // The new app shows the step the proof just spent of the old one.
      const confirmed = await post(client, '/api/account/totp/confirm', {
        code: codeAt(fresh, 0),
      });
      expect(confirmed.status).toBe(200);
      expect(((await confirmed.json()) as { recoveryCodes: string[] }).recoveryCodes).toHaveLength(
        10,
      );
      expect(await signInCode(email, codeAt(secret, 1))).toBe('second_factor_invalid');
      expect(await signInCode(email, codeAt(fresh, 0))).toBe('second_factor_invalid');
      expect(await signInCode(email, codeAt(fresh, 1))).toBeNull();
      const notice = mails.filter((sent) => sent.to === email).at(-1);
      expect(notice?.values.change).toMatch(/moved to a new authenticator app/);
      const { events } = (await (await client.get('/api/account/events')).json()) as {
        events: { type: string }[];
      };
      expect(events.filter((event) => event.type === 'totp_enabled')).toHaveLength(2);
    },
  );

  it.skipIf(skip)(
    'a recovery code stands for the current app, once; the old app signs in until the new one is confirmed, and the old recovery codes are void after',
    async () => {
      const { email, client, secret, recoveryCodes } = await enrolled();
      const setup = await post(client, '/api/account/totp/setup', {
        recoveryCode: recoveryCodes[4],
      });
      expect(setup.status).toBe(200);
      const fresh = ((await setup.json()) as { secret: string }).secret;
      const again = await post(client, '/api/account/totp/setup', {
        recoveryCode: recoveryCodes[4],
      });
      expect(await errorCode(again)).toBe('400 invalid_code');
      expect(await signInCode(email, codeAt(secret, 0))).toBeNull();
      // The refused second set-up left the first one pending.
      const confirmed = await post(client, '/api/account/totp/confirm', {
        code: codeAt(fresh, 0),
      });
      expect(confirmed.status).toBe(200);
      const old = await new Client(server.url).signIn(email, password, undefined, {
        recoveryCode: recoveryCodes[5] ?? '',
      });
      expect(await refusalCode(old)).toBe('second_factor_invalid');
      expect(await signInCode(email, codeAt(fresh, 1))).toBeNull();
    },
  );

  it.skipIf(skip)(
    'a set-up pending from before the proof was asked (or made while TOTP was off) never replaces the app',
    async () => {
      accounts += 1;
      const email = `replace${accounts}@example.com`;
      const userId = await addUser(server, email, password, 'Ada');
      const client = new Client(server.url);
      expect((await client.signIn(email, password)).status).toBe(200);
      // Someone with the password starts a set-up while the account has no TOTP…
      const theirs = await post(client, '/api/account/totp/setup');
      const theirKey = ((await theirs.json()) as { secret: string }).secret;
      const pendingRow = () =>
        server.db
          .selectFrom('user_totp')
          .select(['pending_secret', 'secret'])
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow();
      const left = (await pendingRow()).pending_secret;
      // …the owner turns TOTP on…
      const mine = await post(client, '/api/account/totp/setup');
      const myKey = ((await mine.json()) as { secret: string }).secret;
      expect(
        (await post(client, '/api/account/totp/confirm', { code: codeAt(myKey, 0) })).status,
      ).toBe(200);
      const active = (await pendingRow()).secret;
      // …and the first set-up is pending again, as a set-up made before this release would be.
      await server.db
        .updateTable('user_totp')
        .set({ pending_secret: left })
        .where('user_id', '=', userId)
        .execute();
      const refused = await post(client, '/api/account/totp/confirm', {
        code: codeAt(theirKey, 1),
      });
      expect(refused.status).toBe(400);
      expect(await errorOf(refused)).toEqual({
        code: 'invalid_code',
        message:
          'Start the move to a new app again: it asks for a code of your current app (or a recovery code) first.',
      });
      expect((await pendingRow()).secret).toBe(active);
      expect(await signInCode(email, codeAt(myKey, 1))).toBeNull();
    },
  );

  it.skipIf(skip)(
    'the /account page asks for the current code (or a recovery code) to move to a new app, and says why',
    async () => {
      const client = browser(server);
      const { email, secret, recoveryCodes } = await enrolled(client);
      const page = await (await client.get('/account')).text();
      expect(page).toContain('<summary>Move to a new authenticator app</summary>');
      expect(page).toContain(
        'Moving asks for a code from your current app, or one of your recovery codes, as turning it off does: your password alone cannot change your second step.',
      );
      const move = (fields: Record<string, string>, from = page) =>
        client.postForm('/account/totp/setup', { csrfToken: hidden(from, 'csrfToken'), ...fields });
      const wrong = await move({ currentPassword: password, code: wrongCode(secret, 1) });
      expect(wrong.status).toBe(400);
      const refusedPage = await wrong.text();
      expect(noticeOf(refusedPage)?.text).toBe(
        'That is not a code your current app shows now, nor an unused recovery code, so nothing changed.',
      );
      expect(refusedPage).toMatch(/<input id="moveCode" name="code"[^>]* aria-invalid="true"/);
      // A recovery code, typed in the same field.
      const moved = await move(
        { currentPassword: password, code: recoveryCodes[0] ?? '' },
        refusedPage,
      );
      expect(moved.status).toBe(200);
      const enrol = await moved.text();
      expect(enrol).toContain('Your current app keeps working until then.');
      const key = /<code>([A-Z2-7]{32})<\/code>/.exec(enrol)?.[1] ?? '';
      expect(key).not.toBe(secret);
      const confirmed = await client.postForm('/account/totp/confirm', {
        csrfToken: hidden(enrol, 'csrfToken'),
        code: codeAt(key, 0),
      });
      expect(confirmed.status).toBe(200);
      expect([
        ...(await confirmed.text()).matchAll(/<li><code>[0-9a-z-]{19}<\/code><\/li>/g),
      ]).toHaveLength(10);
      expect(await signInCode(email, codeAt(secret, 1))).toBe('second_factor_invalid');
      expect(await signInCode(email, codeAt(key, 1))).toBeNull();
    },
  );
});

describe.each(backends)('wrong codes at a replacement on $name', ({ skip, create }) => {
  it.skipIf(skip)(
    "are charged to the account as sign-in's codes are: past its limit, the right code is refused elsewhere too",
    async () => {
      const database = await create();
      const server = await startServer({ databaseUrl: database.url, now: () => base });
      try {
        const email = 'counted@example.com';
        await addUser(server, email, password, 'Ada');
        const client = new Client(server.url);
        expect((await client.signIn(email, password)).status).toBe(200);
        const send = (path: string, body: Record<string, unknown> = {}) =>
          postWithCsrf(client, path, body);
        const { secret } = (await (await send('/api/account/totp/setup')).json()) as {
          secret: string;
        };
        expect((await send('/api/account/totp/confirm', { code: codeAt(secret, 0) })).status).toBe(
          200,
        );
        // The account's limit (10 in this suite): each wrong code is one failure.
        for (let n = 0; n < 10; n += 1) {
          const wrong = await send('/api/account/totp/setup', { code: wrongCode(secret, 1) });
          expect(wrong.status).toBe(400);
        }
        const elsewhere = await new Client(server.url).signIn(email, password, undefined, {
          otp: codeAt(secret, 1),
        });
        expect(await refusalCode(elsewhere)).toBe('rate_limited');
      } finally {
        await server.close();
        await database.dispose();
      }
    },
  );
});
