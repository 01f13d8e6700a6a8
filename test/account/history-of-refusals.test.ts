import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../helpers/postgres.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { base, codeAt, refusalCode, turnOnTotp, wrongCode } from '../helpers/totp-codes.js';

/*
 * What the account's security history says of a sign-in that stopped, over real HTTP on SQLite
 * and PostgreSQL: a right password that goes on to the code step is no failure (a two-step
 * sign-in used to leave "Wrong password entered" each time), and a wrong code after a right
 * password says so, since whoever typed it knows the password.
 */

const password = 'correct horse battery staple';

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('the security history of refused sign-ins on %s', (_, postgres) => {
  const skip = postgres && !hasPostgres;
  let database: TestDatabase | undefined;
  let server: TestServer;
  let accounts = 0;

  beforeAll(async () => {
    if (skip) return;
    if (postgres) database = await createTestDatabase();
    server = await startServer({ databaseUrl: database?.url, now: () => base });
  });
  afterAll(async () => {
    if (skip) return;
    await server.close();
    await database?.drop();
  });

  /** A new account with TOTP on (confirmed with the code of step -1), signed in on `owner`. */
  async function withTotp() {
    accounts += 1;
    const email = `history${accounts}@example.com`;
    await addUser(server, email, password, 'Ada');
    const owner = new Client(server.url);
    expect((await owner.signIn(email, password)).status).toBe(200);
    const { secret } = await turnOnTotp(owner, -1);
    return { email, owner, secret };
  }

  /** The password, then `code` alone (the challenge cookie stands for the password). */
  async function twoSteps(email: string, code: string) {
    const client = new Client(server.url);
    expect(await refusalCode(await client.signIn(email, password))).toBe('second_factor_required');
    const csrfToken = await client.csrfToken();
    const answer = await client.postForm(
      '/api/auth/callback/credentials',
      { csrfToken, otp: code },
      { 'x-auth-return-redirect': '1' },
    );
    return refusalCode(answer);
  }

  /** The history's lines on the account page, once `count` events are listed (written after the answers). */
  async function historyLines(owner: Client, count: number): Promise<string[]> {
    await expect
      .poll(
        async () =>
          ((await (await owner.get('/api/account/events')).json()) as { events: unknown[] }).events
            .length,
        { timeout: 10_000 },
      )
      .toBeGreaterThanOrEqual(count);
    const html = await (await owner.get('/account')).text();
    const history = html.slice(html.indexOf('id="history-title"'));
    return [...history.matchAll(/<p class="what">([^<]*)<\/p>/g)].map((match) => match[1] ?? '');
  }

  it.skipIf(skip)(
    'a two-step sign-in records its sign-in and no failure: the password was right',
    async () => {
      const { email, owner, secret } = await withTotp();
      expect(await twoSteps(email, codeAt(secret, 0))).toBeNull();
      // The owner's sign-in, TOTP turned on, the two-step sign-in.
      const lines = await historyLines(owner, 3);
      expect(lines).toContain('Signed in');
      expect(lines.join(' | ')).not.toMatch(/Wrong|wrong/);
    },
  );

  it.skipIf(skip)(
    'a wrong code after the right password is said as such, not as a wrong password',
    async () => {
      const { email, owner, secret } = await withTotp();
      expect(await twoSteps(email, wrongCode(secret, 0))).toBe('second_factor_invalid');
      const lines = await historyLines(owner, 3);
      expect(lines[0]).toBe('Right password, but a wrong authenticator code');
      expect(lines).not.toContain('Wrong password entered');
    },
  );

  it.skipIf(skip)('a wrong password is still a wrong password', async () => {
    const { email, owner } = await withTotp();
    expect(await refusalCode(await new Client(server.url).signIn(email, 'not it'))).toBe(
      'credentials',
    );
    expect((await historyLines(owner, 3))[0]).toBe('Wrong password entered');
  });
});
