import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAccountService, type AccountService } from '../account/account-service.js';
import { Client } from '../helpers/client.js';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import {
  createTestDatabase,
  hasPostgres,
  testPostgresUrl,
  type TestDatabase,
} from '../helpers/postgres.js';

/*
 * Behind a PgBouncer in transaction mode that keeps no prepared statements (before 1.21, or
 * `max_prepared_statements = 0` after), a named statement prepared on one server connection is
 * missing on the next (26000) or already there under a client that thinks it is new (42P05).
 * The built service, left at DATABASE_PREPARED's default (on), sees the first such refusal,
 * says once which setting is wrong, and from then on sends the session check unnamed: every
 * session read answers, none 503.
 */

const password = 'correct horse battery staple';
const skip = !hasPostgres || pgbouncerBinary === undefined;

describe.skipIf(skip)('a session read behind PgBouncer without DATABASE_PREPARED=off', () => {
  let database: TestDatabase;
  let bouncer: PgBouncer;
  let service: AccountService;

  beforeAll(async () => {
    database = await createTestDatabase();
    bouncer = await startPgBouncer(testPostgresUrl as string);
    service = await startAccountService({ DATABASE_URL: bouncer.url(database.name) });
    await service.addUser('ada@example.com', password);
  });
  afterAll(async () => {
    await service?.stop();
    await bouncer?.stop();
    await database?.drop();
  });

  it('falls back to unnamed statements with one warning naming DATABASE_PREPARED=off', async () => {
    const client = new Client(service.url);
    expect((await client.signIn('ada@example.com', password)).status).toBe(200);
    const cookie = `authjs.session-token=${client.sessionCookie() ?? ''}`;
    // Reads side by side, in waves: the pool's connections each prepare the statement on one
    // server connection and meet another one's on the next.
    const statuses: number[] = [];
    for (let wave = 0; wave < 20; wave += 1) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          await new Promise((resolve) => setTimeout(resolve, i * 2));
          const response = await fetch(`${service.url}/api/auth/session`, { headers: { cookie } });
          const body = (await response.json()) as { user?: { email: string } } | null;
          return response.status === 200 && body?.user?.email === 'ada@example.com'
            ? 200
            : response.status;
        }),
      );
      statuses.push(...answers);
    }
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const warnings = service
      .output()
      .split('\n')
      .filter((line) => line.includes('DATABASE_PREPARED'));
    expect(warnings).toHaveLength(1);
    const warning = JSON.parse(warnings[0] as string) as Record<string, unknown>;
    expect(warning).toMatchObject({ level: 40, setting: 'DATABASE_PREPARED' });
    expect(warning.msg).toMatch(/Set DATABASE_PREPARED=off to say so/);
    expect(['42P05', '26000']).toContain(warning.code);
  }, 60_000);
});
