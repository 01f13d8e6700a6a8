import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { hasPostgres, withPgClient } from '../helpers/postgres.js';
import {
  serviceDatabase,
  startAccountService,
  startBuiltService,
  type AccountService,
} from './account-service.js';

/*
 * A person's sessions list and the audit log, over real HTTP against the service in process
 * on SQLite and PostgreSQL: two browsers of one person, another person
 * beside them, then the log's chain checked by `gatehouse audit verify` before and after its
 * rows are changed, deleted and swapped by hand. On PostgreSQL, two instances on one database
 * sign people in at once and still keep one chain.
 */

const password = 'correct horse battery staple';
const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0';
const iphone =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

interface Listed {
  id: string;
  current: boolean;
  createdAt: string;
  lastSeenAt: string;
  device: string;
  ip: string;
}

async function signedIn(service: AccountService, email: string, userAgent: string) {
  const client = new Client(service.url, { 'user-agent': userAgent });
  expect((await client.signIn(email, password)).status).toBe(200);
  return client;
}

async function sessionsOf(client: Client): Promise<Listed[]> {
  const response = await client.get('/api/account/sessions');
  expect(response.status).toBe(200);
  return ((await response.json()) as { sessions: Listed[] }).sessions;
}

const signedInEmail = async (client: Client) =>
  ((await client.session()) as { user?: { email: string } } | null)?.user?.email ?? null;

/** Runs SQL on the service's database from outside, as someone with its file or password would. */
type Tamper = (statements: string[]) => Promise<void>;

function tamperer(backend: 'sqlite' | 'postgres', env: Record<string, string>): Tamper {
  if (backend === 'postgres') {
    return (statements) =>
      withPgClient(env.DATABASE_URL as string, async (client) => {
        await client.query('begin');
        for (const statement of statements) await client.query(statement);
        await client.query('commit');
      });
  }
  return async (statements) => {
    const file = new DatabaseSync(path.join(env.DATA_DIR as string, 'gatehouse.db'), {
      timeout: 5000,
    });
    try {
      file.exec(`begin immediate; ${statements.join(';')}; commit`);
    } finally {
      file.close();
    }
  };
}

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
];

describe.each(backends)('sessions and the audit log on $name', ({ backend, skip }) => {
  let service: AccountService;
  let databaseEnv: Record<string, string>;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    if (skip) return;
    const database = await serviceDatabase(backend);
    databaseEnv = database.env;
    dispose = database.dispose;
    service = await startAccountService(database.env);
    await service.addUser('ada@example.com', password);
    await service.addUser('bob@example.com', password);
  });
  afterAll(async () => {
    if (skip) return;
    await service.stop();
    await dispose();
  });

  it.skipIf(skip)(
    'a person sees both sessions, ends the second, cannot end another’s, and ends all others',
    async () => {
      const laptop = await signedIn(service, 'ada@example.com', firefox);
      const phone = await signedIn(service, 'ada@example.com', iphone);
      const bob = await signedIn(service, 'bob@example.com', firefox);

      const listed = await sessionsOf(laptop);
      expect(listed).toHaveLength(2);
      const [newest, oldest] = listed as [Listed, Listed];
      expect(newest).toMatchObject({
        current: false,
        device: 'Safari 17 on iOS',
        ip: 'this computer (loopback)',
      });
      expect(oldest).toMatchObject({
        current: true,
        device: 'Firefox 130 on Linux',
        ip: 'this computer (loopback)',
      });
      expect(Date.parse(oldest.lastSeenAt)).toBeGreaterThanOrEqual(Date.parse(oldest.createdAt));
      // The id is no credential: nothing of the cookie, nor a UUID like the session's own id.
      expect(laptop.sessionCookie()).not.toContain(newest.id);
      expect(newest.id).toMatch(/^[A-Za-z0-9_-]{22}$/);

      // Another person's session, and an unknown one: the same 404, and bob stays signed in.
      const bobsId = (await sessionsOf(bob))[0]?.id as string;
      for (const id of [bobsId, 'AAAAAAAAAAAAAAAAAAAAAA', 'not-an-id']) {
        const refused = await postWithCsrf(laptop, `/api/account/sessions/${id}/revoke`, {});
        expect(refused.status).toBe(404);
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
          'not_found',
        );
      }
      expect(await signedInEmail(bob)).toBe('bob@example.com');

      const ended = await postWithCsrf(laptop, `/api/account/sessions/${newest.id}/revoke`, {});
      expect(ended.status).toBe(204);
      expect(await phone.session()).toBeNull();
      expect((await sessionsOf(laptop)).map((session) => session.id)).toEqual([oldest.id]);
      // Ended already: a second try is a 404 too.
      expect(
        (await postWithCsrf(laptop, `/api/account/sessions/${newest.id}/revoke`, {})).status,
      ).toBe(404);

      const tablet = await signedIn(service, 'ada@example.com', iphone);
      const desk = await signedIn(service, 'ada@example.com', firefox);
      const others = await postWithCsrf(laptop, '/api/account/sessions/revoke-others', {});
      expect(others.status).toBe(200);
      expect(await others.json()).toEqual({ revoked: 2 });
      expect(await tablet.session()).toBeNull();
      expect(await desk.session()).toBeNull();
      expect(await signedInEmail(laptop)).toBe('ada@example.com');
      expect(await sessionsOf(laptop)).toEqual([expect.objectContaining({ current: true })]);

      // Each ending is in the person's own history.
      const events = (await (await laptop.get('/api/account/events')).json()) as {
        events: { type: string }[];
      };
      expect(events.events.filter((event) => event.type === 'session_revoked')).toHaveLength(2);
      expect((await new Client(service.url).get('/api/account/sessions')).status).toBe(401);
    },
  );

  it.skipIf(skip)(
    'audit verify passes on a clean log and names the first entry changed, removed or swapped',
    async () => {
      // Events are written just after their answers: wait for the chain to hold them all.
      let verified = await service.cli(['audit', 'verify']);
      expect(verified.stderr).toBe('');
      expect(verified.code).toBe(0);
      expect(verified.stdout).toMatch(
        /^audit log whole: \d+ entries; head seq \d+ hash [0-9a-f]{64}\ncheckpoint: seq 0 \(nothing pruned yet\)\nseal: none \(AUDIT_KEY is not set\)\n$/,
      );
      const entries = Number(/(\d+) entries/.exec(verified.stdout)?.[1]);
      expect(entries).toBeGreaterThanOrEqual(8);

      const exported = await service.cli(['audit', 'export', '--since', '2000-01-01']);
      const lines = exported.stdout
        .trim()
        .split('\n')
        .map(
          (line) =>
            JSON.parse(line) as {
              seq: number;
              type: string;
              actor: string | null;
            },
        );
      expect(lines.map((line) => line.seq).slice(0, 3)).toEqual([1, 2, 3]);
      expect(lines[0]).toMatchObject({ type: 'user_created', actor: 'gatehouse CLI' });
      expect((await service.cli(['audit', 'export', '--since', '2999-01-01'])).stdout).toBe('');
      expect((await service.cli(['audit', 'export', '--since', 'yesterday'])).code).toBe(2);

      const tamper = tamperer(backend, databaseEnv);
      const broken = async (expected: RegExp) => {
        const result = await service.cli(['audit', 'verify']);
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(expected);
      };
      // Changed: one field of entry 3, then put back.
      await tamper([`update audit_log set ip = '203.0.113.9' where seq = 3`]);
      await broken(/entry 3 was changed/);
      const original = lines[2] as unknown as { ip: string };
      await tamper([`update audit_log set ip = '${original.ip}' where seq = 3`]);
      verified = await service.cli(['audit', 'verify']);
      expect(verified.code).toBe(0);

      // Swapped: entries 4 and 5 trade places, then back.
      const swap = [
        'update audit_log set seq = -1 where seq = 4',
        'update audit_log set seq = 4 where seq = 5',
        'update audit_log set seq = 5 where seq = -1',
      ];
      await tamper(swap);
      await broken(/entry 4 does not follow the entry before it/);
      await tamper(swap);
      expect((await service.cli(['audit', 'verify'])).code).toBe(0);

      // Removed: entry 6 deleted; then the newest entry deleted (the head names it).
      await tamper(['delete from audit_log where seq = 6']);
      await broken(/entry 6 was removed/);
    },
  );
});

describe.skipIf(!hasPostgres)('two instances on one PostgreSQL', () => {
  it('keep one audit chain while both write events at once', async () => {
    const database = await serviceDatabase('postgres');
    // Two processes, as two instances are: nothing of one's memory is the other's.
    const first = await startBuiltService(database.env);
    let second: AccountService | undefined;
    try {
      second = await startBuiltService(database.env);
      const people = ['a', 'b', 'c', 'd'].map((name) => `${name}@example.com`);
      for (const email of people) await first.addUser(email, password);
      // Sign-ins through both at once: each writes `signin` to the log as its answer goes out.
      const services = [first, second];
      const browsers = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          signedIn(services[i % 2] as AccountService, people[i % 4] as string, firefox),
        ),
      );
      const count = (sql: string) =>
        withPgClient(database.env.DATABASE_URL as string, async (client) =>
          Number((await client.query<{ n: string }>(sql)).rows[0]?.n),
        );
      for (const deadline = Date.now() + 20_000; ;) {
        if ((await count(`select count(*) as n from audit_log where type = 'signin'`)) === 16)
          break;
        if (Date.now() > deadline) throw new Error('the sign-ins were not all recorded');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const verified = await first.cli(['audit', 'verify']);
      expect(verified.stderr).toBe('');
      expect(verified.stdout).toContain('audit log whole: 20 entries; head seq 20');
      expect(await count('select count(distinct prev_hash) as n from audit_log')).toBe(20);

      // Each read notes its session's "last seen" in memory; the drain writes them.
      await new Promise((resolve) => setTimeout(resolve, 5));
      for (const browser of browsers) expect(await signedInEmail(browser)).not.toBeNull();
      await second.stop();
      await first.stop();
      second = undefined;
      expect(
        await count('select count(*) as n from sessions where last_seen_at > created_at'),
      ).toBe(16);
    } finally {
      await second?.stop();
      // Stopping twice is harmless: the second waits for the first's exit.
      await first.stop();
      await database.dispose();
    }
  });
});
