import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { vi } from 'vitest';
import type { Kysely } from 'kysely';
import { buildApp, type AppConfig, type AppDeps } from '../../src/app.js';
import { createJweCodec } from '../../src/auth/session/jwe-codec.js';
import { defaultHashNice } from '../../src/config/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/schema.js';
import { createServices } from '../../src/services.js';

export const testSecret = 'test-secret-0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A clock tests can move. It fakes `Date` itself (timers stay real), so the service's injected
 * clock and the Date.now inside Auth.js and jose agree: with fast paths off, Auth.js's own codec
 * stamps tokens from Date.now. Call `restore()` after the test.
 */
export function fakeClock(start = Date.now()) {
  vi.useFakeTimers({ toFake: ['Date'], now: start });
  return {
    now: () => Date.now(),
    advance(ms: number) {
      vi.setSystemTime(Date.now() + ms);
    },
    restore() {
      vi.useRealTimers();
    },
  };
}

export interface TestServer {
  url: string;
  app: FastifyInstance;
  db: Kysely<Database>;
  services: ReturnType<typeof createServices>;
  dir: string;
  /** Every log line the server wrote, raw. */
  logs: string[];
  close(): Promise<void>;
}

export interface TestServerOptions {
  config?: Partial<AppConfig>;
  throttle?: Partial<ReturnType<typeof defaultThrottle>>;
  sessionsPerUserMax?: number;
  databasePrepared?: boolean;
  hashConcurrency?: number;
  hashQueueMax?: number;
  now?: () => number;
  databaseUrl?: string;
  wrap?: (deps: AppDeps) => AppDeps;
  isDraining?: () => boolean;
}

function defaultThrottle() {
  // Attempt limits out of the way: suites sign one account in many times from 127.0.0.1.
  return {
    emailMaxFailures: 10,
    ipMaxFailures: 100,
    emailMaxAttempts: 1_000_000,
    ipMaxAttempts: 1_000_000,
    windowSeconds: 900,
    lockSeconds: 900,
  };
}

/** The real app on a real SQLite file in a temp folder, listening on 127.0.0.1:0. */
export async function startServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-'));
  const { db, dialect, sqlite, sqliteChecks, pgPool } = openDatabase(
    options.databaseUrl ?? `file:${path.join(dir, 'test.db')}`,
  );
  await migrateToLatest(db);
  const now = options.now ?? (() => Date.now());
  const services = createServices(
    db,
    {
      throttle: { ...defaultThrottle(), ...options.throttle },
      sessionsPerUserMax: options.sessionsPerUserMax,
      databasePrepared: options.databasePrepared,
      hashConcurrency: options.hashConcurrency ?? 2,
      hashQueueMax: options.hashQueueMax ?? 1000,
      hashNice: defaultHashNice,
      sqlite,
      sqliteChecks,
      pgPool,
    },
    now,
  );
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const fastPaths = process.env.GATEHOUSE_TEST_FAST_PATHS !== 'off';
  const config: AppConfig = {
    authSecrets: [testSecret],
    authUrl: undefined,
    trustProxy: [],
    sessionCookiePrefix: '__Secure-',
    session: {
      maxAgeSeconds: 30 * 86400,
      updateAgeSeconds: 86400,
      absoluteMaxAgeSeconds: 90 * 86400,
    },
    bodyLimitBytes: 16 * 1024,
    requestTimeoutMs: 10_000,
    fastPaths,
    ...options.config,
  };
  let deps: AppDeps = {
    config,
    db,
    dialect,
    ...services,
    codec: createJweCodec({ now }),
    version: '9.9.9-test',
    logger: { level: 'debug', stream },
    now,
    isDraining: options.isDraining,
  };
  if (options.wrap) deps = options.wrap(deps);
  const app = buildApp(deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    db,
    services,
    dir,
    logs,
    async close() {
      await app.close();
      await services.hasher.close();
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function addUser(
  server: TestServer,
  email: string,
  password: string,
  name = 'Test User',
): Promise<string> {
  const passwordHash = await server.services.hasher.hash(password.normalize('NFKC'));
  const user = await server.services.users.create({ email, name, passwordHash });
  if (user === null) throw new Error(`user ${email} exists`);
  return user.id;
}

/** Wraps the hasher so a test can count argon2 verifications (each one is real). */
export function countVerifications(): { wrap: (deps: AppDeps) => AppDeps; count: () => number } {
  let verifications = 0;
  return {
    wrap: (deps) => ({
      ...deps,
      hasher: {
        ...deps.hasher,
        verify: (hash, password) => {
          verifications += 1;
          return deps.hasher.verify(hash, password);
        },
      },
    }),
    count: () => verifications,
  };
}
