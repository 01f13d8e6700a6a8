import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationNames } from '../../src/db/migrate.js';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import {
  createTestDatabase,
  hasPostgres,
  testPostgresUrl,
  withPgClient,
  type TestDatabase,
} from '../helpers/postgres.js';
import { freePort } from '../helpers/processes.js';
import { distDir } from '../helpers/spawn.js';

interface Replica {
  url: string;
  exited: Promise<number | null>;
  stderr: () => string;
  kill(): void;
}

/** Distinct free ports (two picks could be the same port). */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

function startReplica(databaseUrl: string, secret: string, port: number, prepared = true): Replica {
  const child = spawn(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      AUTH_SECRET: secret,
      AUTH_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'warn',
      DATABASE_PREPARED: prepared ? 'on' : 'off',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    exited,
    stderr: () => stderr,
    kill: () => child.kill('SIGTERM'),
  };
}

/** Polls readiness until 200, or reports how the replica ended. */
async function readyOrExit(replica: Replica): Promise<'ready' | string> {
  let exitCode: number | null | undefined;
  void replica.exited.then((code) => (exitCode = code));
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) return `exited with ${exitCode}: ${replica.stderr()}`;
    try {
      if ((await fetch(`${replica.url}/api/health/ready`)).status === 200) return 'ready';
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return `not ready after 20 s: ${replica.stderr()}`;
}

describe.each([
  ['directly', false],
  ['through PgBouncer 1.18 in transaction mode', true],
] as const)('several replicas on one empty PostgreSQL, %s', (_, viaPgBouncer) => {
  let database: TestDatabase | undefined;
  let bouncer: PgBouncer | undefined;
  let replicas: Replica[] = [];
  const skip = !hasPostgres || (viaPgBouncer && pgbouncerBinary === undefined);

  afterEach(async () => {
    for (const replica of replicas) replica.kill();
    await Promise.all(replicas.map((replica) => replica.exited));
    replicas = [];
    await bouncer?.stop();
    bouncer = undefined;
    await database?.drop();
  });

  // Three rounds, each on a new database: a race that loses only sometimes still shows.
  it.skipIf(skip).each([1, 2, 3])(
    'three replicas started at the same moment all become ready, with one schema (round %i)',
    async () => {
      database = await createTestDatabase();
      const secret = randomBytes(32).toString('base64');
      let url = database.url;
      if (viaPgBouncer) {
        bouncer = await startPgBouncer(testPostgresUrl as string);
        url = bouncer.url(database.name);
      }
      const ports = await freePorts(3);
      replicas = ports.map((port) => startReplica(url, secret, port, !viaPgBouncer));
      const outcomes = await Promise.all(replicas.map(readyOrExit));
      expect(outcomes).toEqual(['ready', 'ready', 'ready']);

      const applied = await withPgClient(database.url, (client) =>
        client.query<{ name: string }>('select name from kysely_migration order by name'),
      );
      expect(applied.rows.map((row) => row.name)).toEqual(migrationNames);
      const tables = await withPgClient(database.url, (client) =>
        client.query<{ count: string }>(
          "select count(*) as count from information_schema.tables where table_schema = 'public' and table_name = 'users'",
        ),
      );
      expect(tables.rows[0]?.count).toBe('1');

      for (const replica of replicas) replica.kill();
      expect(await Promise.all(replicas.map((replica) => replica.exited))).toEqual([0, 0, 0]);
    },
  );
});
