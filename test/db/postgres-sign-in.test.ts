import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/http/errors.js';
import { Client } from '../helpers/client.js';
import {
  createTestDatabase,
  hasPostgres,
  testPostgresUrl,
  terminateOtherConnections,
  withPgClient,
  type TestDatabase,
} from '../helpers/postgres.js';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';
const wrong = 'this is not the password';

async function urlOf(response: Response): Promise<string> {
  return ((await response.json()) as { url: string }).url;
}

/** Reads a session with a bare cookie, as a client that copied it would. */
async function sessionWith(server: TestServer, cookie: string | undefined): Promise<unknown> {
  const response = await fetch(`${server.url}/api/auth/session`, {
    headers: { cookie: `authjs.session-token=${cookie ?? ''}` },
  });
  expect(response.status).toBe(200);
  return response.json();
}

describe.each([
  ['PostgreSQL', false],
  ['PostgreSQL through PgBouncer 1.18 in transaction mode (DATABASE_PREPARED=off)', true],
] as const)('the real app on %s', (_, viaPgBouncer) => {
  let database: TestDatabase;
  let bouncer: PgBouncer | undefined;
  let servers: TestServer[] = [];
  const skip = !hasPostgres || (viaPgBouncer && pgbouncerBinary === undefined);

  beforeAll(async () => {
    if (viaPgBouncer && !skip) bouncer = await startPgBouncer(testPostgresUrl as string);
  });
  afterAll(async () => {
    await bouncer?.stop();
  });

  beforeEach(async () => {
    if (!skip) database = await createTestDatabase();
  });

  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
    if (!skip) await database.drop();
  });

  /** The app's own connection: through PgBouncer when it is the target; admin work stays direct. */
  async function start(): Promise<TestServer> {
    const server = await startServer({
      databaseUrl: bouncer === undefined ? database.url : bouncer.url(database.name),
      databasePrepared: bouncer === undefined,
    });
    servers.push(server);
    return server;
  }

  it.skipIf(skip)(
    'signs in over HTTP, reads the session, signs out, and the old cookie then reads as no session',
    async () => {
      const server = await start();
      const userId = await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
      const client = new Client(server.url);

      const signedIn = await client.signIn('ada@example.com', password);
      expect(signedIn.status).toBe(200);
      expect(await urlOf(signedIn)).not.toContain('error');
      const cookie = client.sessionCookie();
      expect(cookie).toBeDefined();
      expect(await client.session()).toMatchObject({
        user: { id: userId, email: 'ada@example.com', name: 'Ada Lovelace' },
      });

      const signedOut = await client.signOut();
      expect(signedOut.status).toBe(200);
      expect(client.sessionCookie()).toBeUndefined();
      expect(await sessionWith(server, cookie)).toBeNull();
      const rows = await server.db.selectFrom('sessions').select('revoked_at').execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]?.revoked_at).toEqual(expect.any(Number));
    },
  );

  it.skipIf(skip)(
    'two instances started together on one database share sessions and sign-outs',
    async () => {
      // Both run the migrations at the same moment, as two replicas of a deployment would.
      const [one, two] = await Promise.all([start(), start()]);
      await addUser(one, 'ada@example.com', password);

      const client = new Client(one.url);
      await client.signIn('ada@example.com', password);
      const cookie = client.sessionCookie();
      expect(await sessionWith(two, cookie)).toMatchObject({ user: { email: 'ada@example.com' } });

      // Signing out on instance 2 ends the session on instance 1 too.
      const other = new Client(two.url);
      other.cookies.set('authjs.session-token', cookie ?? '');
      expect((await other.signOut()).status).toBe(200);
      expect(await sessionWith(one, cookie)).toBeNull();
    },
  );

  it.skipIf(skip)(
    'wrong passwords split round-robin across two instances lock the account at the global threshold',
    async () => {
      const [one, two] = await Promise.all([start(), start()]);
      await addUser(one, 'ada@example.com', password);
      const clients = [new Client(one.url), new Client(two.url)];

      for (let i = 0; i < 10; i += 1) {
        const response = await clients[i % 2]?.signIn('ada@example.com', wrong);
        expect(response?.status).toBe(200);
        expect(await urlOf(response as Response)).toContain('code=credentials');
      }
      for (const [i, client] of clients.entries()) {
        const locked = await client.signIn('ada@example.com', password);
        expect(locked.status, `instance ${i + 1}`).toBe(429);
        expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(890);
        expect(Number(locked.headers.get('retry-after'))).toBeLessThanOrEqual(900);
        expect(await urlOf(locked)).toContain('code=rate_limited');
        expect(client.sessionCookie()).toBeUndefined();
      }
    },
  );

  it.skipIf(skip)(
    'after every database connection is killed, the pool reconnects without a restart',
    async () => {
      const server = await start();
      await addUser(server, 'ada@example.com', password);
      const client = new Client(server.url);
      await client.signIn('ada@example.com', password);
      expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });

      // Fill the pool with several connections first, so that several of them die.
      await Promise.all(Array.from({ length: 6 }, () => client.get('/api/auth/session')));
      expect(await terminateOtherConnections(database.url)).toBeGreaterThan(0);

      // At most the first request may notice the loss, and only as a clean 503.
      const answers: { status: number; text: string }[] = [];
      for (let i = 0; i < 3; i += 1) {
        const response = await client.get('/api/auth/session');
        answers.push({ status: response.status, text: await response.text() });
      }
      const failed = answers.filter((answer) => answer.status !== 200);
      expect(failed.length).toBeLessThanOrEqual(1);
      expect(answers.slice(1).every((answer) => answer.status === 200)).toBe(true);
      for (const answer of failed) {
        expect(answer.status).toBe(503);
        expect((JSON.parse(answer.text) as ErrorBody).error.code).toBe('unavailable');
        expect(answer.text).not.toMatch(/\n\s+at |node_modules|Error:/);
      }
      expect(JSON.parse(answers[2]?.text ?? 'null')).toMatchObject({
        user: { email: 'ada@example.com' },
      });

      // A second kill, then a sign-in (throttle, user lookup, session row) goes through. A write
      // is not repeated behind the client's back, so each dead connection the pool still held
      // (the mail worker and the event record keep a few) may fail one attempt, cleanly; the
      // pool never hands out more than its ten.
      await terminateOtherConnections(database.url);
      const again = new Client(server.url);
      let signIn = await again.signIn('ada@example.com', password);
      for (let attempt = 0; signIn.status === 503 && attempt < 10; attempt += 1) {
        const text = await signIn.text();
        expect((JSON.parse(text) as ErrorBody).error.code).toBe('unavailable');
        expect(text).not.toMatch(/\n\s+at |node_modules|Error:/);
        signIn = await again.signIn('ada@example.com', password);
      }
      expect(signIn.status).toBe(200);
      expect(await urlOf(signIn)).not.toContain('error');
      expect(await again.session()).toMatchObject({ user: { email: 'ada@example.com' } });
    },
  );

  it.skipIf(skip)(
    'a connection killed in the middle of a transaction fails that transaction only; the process lives on',
    async () => {
      const server = await start();
      const userId = await addUser(server, 'ada@example.com', password, 'Ada Lovelace');
      // The connection is checked out (not idle in the pool) when it dies: its 'error' event must
      // not become an uncaught exception, which would end a real process (vitest reports it).
      const transaction = server.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('users')
          .set({ name: 'Half done' })
          .where('id', '=', userId)
          .execute();
        await terminateOtherConnections(database.url);
        await trx.updateTable('users').set({ name: 'Done' }).where('id', '=', userId).execute();
      });
      await expect(transaction).rejects.toThrow();
      expect((await server.services.users.findById(userId))?.name).toBe('Ada Lovelace');

      const client = new Client(server.url);
      const signIn = await client.signIn('ada@example.com', password);
      expect(signIn.status).toBe(200);
      expect(await client.session()).toMatchObject({ user: { id: userId } });
    },
  );

  it.skipIf(skip)(
    'a database that stalls ends the sign-in at its statement deadline with a 503, and the service recovers',
    async () => {
      const server = await start();
      await addUser(server, 'ada@example.com', password);
      const client = new Client(server.url);
      const csrfToken = await client.csrfToken();
      // Another session holds a lock the sign-in's throttle write must wait for.
      let release = () => undefined as void;
      const held = withPgClient(database.url, async (admin) => {
        await admin.query('begin');
        await admin.query('lock table signin_throttle in access exclusive mode');
        await new Promise<void>((resolve) => (release = resolve));
        await admin.query('rollback');
      });
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      const stalled = await client.postForm(
        '/api/auth/callback/credentials',
        { csrfToken, email: 'ada@example.com', password },
        { 'x-auth-return-redirect': '1' },
      );
      const elapsed = Date.now() - started;
      // Health stays live meanwhile (no database on that path).
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
      release();
      await held;
      expect(stalled.status).toBe(503);
      expect(stalled.headers.get('retry-after')).toBe('5');
      const text = await stalled.text();
      expect((JSON.parse(text) as ErrorBody).error.code).toBe('unavailable');
      expect(text).not.toMatch(/timeout|statement|signin_throttle|lock/i);
      // The statement timeout (5 s) ends it. The lock is held until the answer: without a
      // timeout the sign-in would wait for ever, so the upper bound only has to catch a hang,
      // not a loaded machine's slower answer.
      expect(elapsed).toBeGreaterThanOrEqual(4500);
      expect(elapsed).toBeLessThan(30_000);
      expect(client.sessionCookie()).toBeUndefined();

      const after = await client.signIn('ada@example.com', password);
      expect(after.status).toBe(200);
      expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
    },
    60_000,
  );
});
