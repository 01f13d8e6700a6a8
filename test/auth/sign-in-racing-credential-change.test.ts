import { hash } from '@node-rs/argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppDeps } from '../../src/app.js';
import type { SessionStore } from '../../src/sessions/session-store.js';
import { Client, sessionCookieName } from '../helpers/client.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../helpers/postgres.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';
const newPassword = 'a brand new password for ada';
const refused = '/api/auth/signin?error=CredentialsSignin&code=credentials';

/** Where a sign-in can be held: after authorize read the user row, or just before its insert. */
type HoldPoint = 'row read' | 'session insert';

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve = () => undefined as void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * Holds the next sign-in that reaches the armed point until the test releases it: the race with
 * a credential change made deterministic. Other sign-ins pass straight through.
 */
function createHold() {
  let armed: HoldPoint | undefined;
  let reached = deferred();
  let released = deferred();
  async function at(point: HoldPoint): Promise<void> {
    if (armed !== point) return;
    armed = undefined;
    reached.resolve();
    await released.promise;
  }
  return {
    arm(point: HoldPoint): Promise<void> {
      armed = point;
      reached = deferred();
      released = deferred();
      return reached.promise;
    },
    release: () => released.resolve(),
    wrap: (deps: AppDeps): AppDeps => ({
      ...deps,
      users: {
        ...deps.users,
        async findByEmail(email) {
          const user = await deps.users.findByEmail(email);
          await at('row read');
          return user;
        },
      },
      sessions: {
        ...deps.sessions,
        async create(...args: Parameters<SessionStore['create']>) {
          await at('session insert');
          return deps.sessions.create(...args);
        },
      },
    }),
  };
}

async function urlOf(response: Response): Promise<string> {
  return ((await response.json()) as { url: string }).url;
}

/** Reads a session with a bare cookie, as a client that kept it would. */
async function sessionWith(server: TestServer, cookie: string): Promise<unknown> {
  const response = await fetch(`${server.url}/api/auth/session`, {
    headers: { cookie: `${sessionCookieName}=${cookie}` },
  });
  expect(response.status).toBe(200);
  return response.json();
}

/** What the account's administrator does while a sign-in is in flight, and after it ended. */
interface Change {
  name: string;
  during(server: TestServer, userId: string): Promise<unknown>;
  after?(server: TestServer, userId: string): Promise<unknown>;
}

const changes: Change[] = [
  {
    name: 'users set-password',
    during: async (server, userId) =>
      server.services.users.setPasswordHash(userId, await server.services.hasher.hash(newPassword)),
  },
  {
    name: 'users disable, then users enable after the sign-in ended',
    during: (server, userId) => server.services.users.setDisabled(userId, true),
    after: (server, userId) => server.services.users.setDisabled(userId, false),
  },
  {
    name: 'users disable',
    during: (server, userId) => server.services.users.setDisabled(userId, true),
  },
  {
    name: 'users remove',
    during: (server, userId) => server.services.users.remove(userId),
  },
];

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('a sign-in in flight during a credential change, on %s', (_, postgres) => {
  const skip = postgres && !hasPostgres;
  const hold = createHold();
  let database: TestDatabase | undefined;
  let server: TestServer;
  let accounts = 0;

  beforeAll(async () => {
    if (skip) return;
    if (postgres) database = await createTestDatabase();
    server = await startServer({
      databaseUrl: database?.url,
      wrap: hold.wrap,
      // Refusals after the change are wrong passwords: no lock may end the run early.
      throttle: { emailMaxFailures: 1000, ipMaxFailures: 1000 },
    });
  });
  afterAll(async () => {
    if (skip) return;
    await server.close();
    await database?.drop();
  });

  async function newAccount(): Promise<{ email: string; userId: string }> {
    accounts += 1;
    const email = `ada${accounts}@example.com`;
    return { email, userId: await addUser(server, email, password, 'Ada') };
  }

  /** The answer a wrong password gets, to compare a refused sign-in with. */
  async function wrongPasswordAnswer(): Promise<{ status: number; url: string }> {
    const { email } = await newAccount();
    const response = await new Client(server.url).signIn(email, 'not the password at all');
    return { status: response.status, url: await urlOf(response) };
  }

  const cases = (['row read', 'session insert'] as const).flatMap((point) =>
    changes.map((change) => [change.name, point, change] as const),
  );

  it.skipIf(skip).each(cases)(
    'a sign-in held during %s (held after its %s) ends like a wrong password, and no session of it is valid',
    async (_name, point, change) => {
      const { email, userId } = await newAccount();
      const reached = hold.arm(point);
      const client = new Client(server.url);
      const answer = client.signIn(email, password);
      await reached;
      await change.during(server, userId);
      hold.release();
      const response = await answer;
      await change.after?.(server, userId);

      const answered = { status: response.status, url: await urlOf(response) };
      expect(answered).toEqual({ status: 200, url: `${server.url}${refused}` });
      expect(answered).toEqual(await wrongPasswordAnswer());
      const cookie = client.sessionCookie();
      if (cookie !== undefined) expect(await sessionWith(server, cookie)).toBeNull();
      expect(await client.session()).toBeNull();
      const live = await server.db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .execute();
      expect(live).toEqual([]);
    },
  );

  it.skipIf(skip)(
    "another sign-in's hash upgrade is no credential change: the held sign-in and the upgrading one both hold valid sessions",
    async () => {
      const weak = await hash(password, {
        algorithm: 2,
        memoryCost: 4096,
        timeCost: 1,
        parallelism: 1,
      });
      accounts += 1;
      const email = `old${accounts}@example.com`;
      const user = await server.services.users.create({ email, name: 'Old', passwordHash: weak });
      if (user === null) throw new Error('no user');

      const reached = hold.arm('row read');
      const held = new Client(server.url);
      const heldAnswer = held.signIn(email, password);
      await reached;
      const upgrading = new Client(server.url);
      expect(await urlOf(await upgrading.signIn(email, password))).not.toContain('error');
      expect((await server.services.users.findById(user.id))?.passwordHash).not.toBe(weak);
      hold.release();
      expect(await urlOf(await heldAnswer)).not.toContain('error');

      expect(await held.session()).toMatchObject({ user: { email } });
      expect(await upgrading.session()).toMatchObject({ user: { email } });
    },
  );

  it.skipIf(skip)(
    'black box: of 13 sign-ins in flight while set-password runs, none holds a valid session after it returned',
    async () => {
      const { email, userId } = await newAccount();
      const clients = Array.from({ length: 13 }, () => new Client(server.url));
      let changed = false;
      let endedAfterChange = 0;
      const answers = clients.map(async (client) => {
        const response = await client.signIn(email, password);
        if (changed) endedAfterChange += 1;
        return response;
      });
      // The first answer means the rest are in Auth.js or at its door, their rows read or not.
      await Promise.race(answers);
      await server.services.users.setPasswordHash(
        userId,
        await server.services.hasher.hash(newPassword),
      );
      changed = true;
      const statuses = (await Promise.all(answers)).map((response) => response.status);
      expect(statuses.every((status) => status === 200)).toBe(true);
      expect(endedAfterChange).toBeGreaterThan(0);

      const valid: string[] = [];
      for (const client of clients) {
        const cookie = client.sessionCookie();
        if (cookie !== undefined && (await sessionWith(server, cookie)) !== null)
          valid.push(cookie);
      }
      expect(valid).toEqual([]);
    },
    30_000,
  );
});
