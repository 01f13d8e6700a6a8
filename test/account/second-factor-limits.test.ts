import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { showUser, unlockEmail } from '../../src/operator/operations.js';
import { postWithCsrf } from '../helpers/account-requests.js';
import { capturedMail } from '../helpers/captured-mail.js';
import { Client } from '../helpers/client.js';
import { browser, follow, hidden, noticeOf, submitSignInForm } from '../pages/page-helpers.js';
import {
  createTestDatabase,
  describeIfPostgres,
  hasPostgres,
  type TestDatabase,
} from '../helpers/postgres.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { base, codeAt, refusalCode, stepMs, turnOnTotp, wrongCode } from '../helpers/totp-codes.js';

/*
 * Someone who already has the password, guessing the second factor: the budget of code guesses
 * is the account's own (10, then a lock of 15 minutes that doubles), a right password does not
 * give it back and a device cookie does not lift it; a recovery code still gets the owner in,
 * and the owner is told. Over real HTTP on SQLite and PostgreSQL, the service's clock injected.
 */

const password = 'correct horse battery staple';
const lockMs = 15 * 60_000;

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('second-factor guesses on %s', (_, postgres) => {
  const skip = postgres && !hasPostgres;
  let database: TestDatabase | undefined;
  let server: TestServer;
  let clock = base;
  const mail = capturedMail();
  let accounts = 0;

  beforeAll(async () => {
    if (skip) return;
    if (postgres) database = await createTestDatabase();
    server = await startServer({
      databaseUrl: database?.url,
      now: () => clock,
      config: { trustProxy: ['127.0.0.1'] },
      wrap: (deps) => ({ ...deps, mail: mail.queue }),
    });
  });
  afterAll(async () => {
    if (skip) return;
    await server.close();
    await database?.drop();
  });

  /** A new account with TOTP on, and the client that signed in before it was on. */
  async function enrolled() {
    clock = base;
    accounts += 1;
    const email = `grace${accounts}@example.com`;
    const userId = await addUser(server, email, password, 'Grace');
    const owner = new Client(server.url);
    expect((await owner.signIn(email, password)).status).toBe(200);
    const { secret, recoveryCodes } = await turnOnTotp(owner, -1);
    return { email, userId, owner, secret, recoveryCodes };
  }

  const step = () => Math.round((clock - base) / stepMs);
  const signIn = (email: string, extra: Record<string, string>, client?: Client) =>
    (client ?? new Client(server.url)).signIn(email, password, undefined, extra);

  /** The codes the answers gave, in order: each wrong guess checked, or refused unchecked. */
  async function guess(
    account: { email: string; secret: string },
    times: number,
    client?: (n: number) => Client,
  ) {
    const codes: (string | null)[] = [];
    for (let n = 0; n < times; n += 1) {
      const otp = wrongCode(account.secret, step());
      codes.push(await refusalCode(await signIn(account.email, { otp }, client?.(n))));
    }
    return codes;
  }

  const eventsOf = async (userId: string) =>
    (
      await server.db
        .selectFrom('account_events')
        .select('type')
        .where('user_id', '=', userId)
        .execute()
    ).map((row) => row.type);

  it.skipIf(skip)(
    'a right password does not give back the code budget: 10 wrong codes lock the step, the right code too',
    async () => {
      const account = await enrolled();
      const { email, userId, secret } = account;
      // Each post proves the password again; the count goes on.
      expect(await guess(account, 10)).toEqual(Array(10).fill('second_factor_invalid'));
      const locked = await signIn(email, { otp: codeAt(secret, 0) });
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(lockMs / 1000 - 5);
      expect(await refusalCode(locked)).toBe('rate_limited');
      // The owner is told, in the record and by mail.
      expect((await eventsOf(userId)).filter((type) => type === 'second_factor_locked')).toEqual([
        'second_factor_locked',
      ]);
      const notice = mail.to(email).at(-1);
      expect(notice?.kind).toBe('second-factor-notice');
      expect(notice?.values.change).toMatch(/Codes are refused for the next 15 minutes/);
    },
  );

  it.skipIf(skip)(
    'a device cookie from before TOTP was on lifts no limit on codes, from any number of addresses',
    async () => {
      const account = await enrolled();
      const { owner } = account;
      // The owner's browser holds a device cookie of a password sign-in; each address sends it.
      const device = owner.cookies.get('gatehouse.device');
      expect(device).toBeDefined();
      const from = (n: number) => {
        const client = new Client(server.url, { 'x-forwarded-for': `198.51.100.${(n % 4) + 1}` });
        client.cookies.set('gatehouse.device', device as string);
        return client;
      };
      const codes = await guess(account, 40, from);
      expect(codes.filter((code) => code === 'second_factor_invalid')).toHaveLength(10);
      expect(codes.slice(10)).toEqual(Array(30).fill('rate_limited'));
    },
  );

  it.skipIf(skip)(
    'a recovery code gets the owner in through the lock and starts the count over',
    async () => {
      const account = await enrolled();
      const { email, secret, recoveryCodes } = account;
      await guess(account, 10);
      const owner = new Client(server.url);
      const signedIn = await signIn(email, { recoveryCode: recoveryCodes[0] as string }, owner);
      expect(signedIn.status).toBe(200);
      expect(owner.sessionCookie()).toBeDefined();
      // Over: the next wrong code is checked again, and the right one signs in.
      expect(await guess(account, 1)).toEqual(['second_factor_invalid']);
      expect((await signIn(email, { otp: codeAt(secret, 0) })).status).toBe(200);
    },
  );

  it.skipIf(skip)(
    'the sign-in page says the codes are paused, not the password, and keeps the recovery code open',
    async () => {
      const account = await enrolled();
      const { email, secret, recoveryCodes } = account;
      const client = browser(server);
      const step = await follow(client, await submitSignInForm(client, { email, password }));
      const post = (fields: Record<string, string>) =>
        client.postForm('/api/auth/callback/credentials', {
          csrfToken: hidden(step, 'csrfToken'),
          callbackUrl: hidden(step, 'callbackUrl'),
          ...fields,
        });
      for (let n = 0; n < 10; n += 1) await post({ otp: wrongCode(secret, 0) });
      const paused = await post({ otp: codeAt(secret, 0) });
      expect(paused.headers.get('location')).toMatch(
        /code=rate_limited&retryAfter=\d+&afterPassword=1$/,
      );
      const page = await follow(client, paused);
      expect(noticeOf(page)).toEqual({
        role: 'alert',
        text: 'Too many wrong codes. Codes for this account are paused for now to keep it safe, and your code was not checked this time. Please try again in 15 minutes, or sign in with a recovery code.',
      });
      expect(page).toContain('name="otp"');
      expect(page).toContain('<details open>');
      const recovered = await post({ recoveryCode: recoveryCodes[1] as string });
      expect(recovered.headers.get('location')).not.toContain('error=');
      expect(client.sessionCookie()).toBeDefined();
    },
  );

  it.skipIf(skip)(
    'each lock lasts twice the one before, and the count only ends with a right code',
    async () => {
      const account = await enrolled();
      const { email, secret } = account;
      await guess(account, 10);
      clock += lockMs + stepMs;
      // The lock is over, but the count is not: ten more, then thirty minutes.
      expect(await guess(account, 10)).toEqual(Array(10).fill('second_factor_invalid'));
      const second = await signIn(email, { otp: codeAt(secret, step()) });
      expect(second.status).toBe(429);
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(2 * (lockMs / 1000) - 5);
      clock += lockMs + stepMs;
      expect(await refusalCode(await signIn(email, { otp: codeAt(secret, step()) }))).toBe(
        'rate_limited',
      );
      clock += lockMs;
      expect((await signIn(email, { otp: codeAt(secret, step()) })).status).toBe(200);
      // A right code started it over: ten wrong ones are checked before the next lock.
      expect(await guess(account, 10)).toEqual(Array(10).fill('second_factor_invalid'));
      expect(await guess(account, 1)).toEqual(['rate_limited']);
    },
  );

  it.skipIf(skip)(
    're-authentication and sign-in share one count, and an operator unlock clears it',
    async () => {
      const account = await enrolled();
      const { email, owner, secret } = account;
      for (let n = 0; n < 5; n += 1) {
        const reauth = await postWithCsrf(owner, '/api/account/reauthenticate', {
          password,
          otp: wrongCode(secret, 0),
        });
        expect(reauth.status).toBe(403);
      }
      expect(await guess(account, 5)).toEqual(Array(5).fill('second_factor_invalid'));
      expect(await guess(account, 1)).toEqual(['rate_limited']);
      const reauth = await postWithCsrf(owner, '/api/account/reauthenticate', {
        password,
        otp: codeAt(secret, 0),
      });
      expect(reauth.status).toBe(429);

      // The operator sees the lock in the user's summary (users list, the admin API).
      const ports = { db: server.db, now: () => clock, throttle: server.services.throttle };
      expect(await showUser(ports, { userId: account.userId })).toMatchObject({ locked: true });
      const { lockedUntil } = await unlockEmail(ports, {
        email,
        actor: { label: 'gatehouse CLI' },
      });
      expect(lockedUntil).toBeGreaterThan(clock);
      expect(await showUser(ports, { userId: account.userId })).toMatchObject({ locked: false });
      expect((await signIn(email, { otp: codeAt(secret, 0) })).status).toBe(200);
    },
  );
});

describeIfPostgres('second-factor guesses across two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let servers: TestServer[];
  const clock = base;

  beforeAll(async () => {
    database = await createTestDatabase();
    servers = [];
    for (let n = 0; n < 2; n += 1)
      servers.push(await startServer({ databaseUrl: database.url, now: () => clock }));
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await database.drop();
  });

  async function enrolledOn(email: string) {
    const [first] = servers as [TestServer];
    await addUser(first, email, password, 'Grace');
    const owner = new Client(first.url);
    expect((await owner.signIn(email, password)).status).toBe(200);
    return turnOnTotp(owner, -1);
  }
  const on = (n: number) => new Client((servers[n % 2] as TestServer).url);

  it('one count: wrong codes through either instance lock the step on both', async () => {
    const email = 'ada@example.com';
    const { secret } = await enrolledOn(email);
    for (let n = 0; n < 10; n += 1) {
      const answer = await on(n).signIn(email, password, undefined, { otp: wrongCode(secret, 0) });
      expect(await refusalCode(answer)).toBe('second_factor_invalid');
    }
    for (let n = 0; n < 2; n += 1) {
      const answer = await on(n).signIn(email, password, undefined, { otp: codeAt(secret, 0) });
      expect(answer.status).toBe(429);
    }
  });

  it('one right code sent by 10 clients across both instances signs in exactly once', async () => {
    const email = 'grace@example.com';
    const { secret } = await enrolledOn(email);
    const clients = Array.from({ length: 10 }, (_, n) => on(n));
    const answers = await Promise.all(
      clients.map((client) =>
        client.signIn(email, password, undefined, { otp: codeAt(secret, 0) }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    expect(clients.filter((client) => client.sessionCookie() !== undefined)).toHaveLength(1);
  });
});
