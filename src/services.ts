import type { Database as SQLiteDatabase } from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Pool as PgPool } from 'pg';
import { createKyselySessionStore } from './auth/session-store.js';
import { createThrottle, type ThrottleSettings } from './auth/throttle.js';
import { createKyselyThrottleStore } from './auth/throttle-store.js';
import type { Database } from './db/schema.js';
import { createArgon2Hasher } from './users/hasher.js';
import { createKyselyUserStore } from './users/kysely-store.js';

export interface ServiceSettings {
  /** The raw handle behind `db` (`openDatabase` gives one), for prepared statements on hot paths. */
  sqlite?: SQLiteDatabase;
  pgPool?: PgPool;
  throttle: ThrottleSettings;
  hashConcurrency: number;
  hashQueueMax: number;
}

/** The stores and workers the app and the CLI share, over one open database. */
export function createServices(
  db: Kysely<Database>,
  settings: ServiceSettings,
  now = () => Date.now(),
) {
  return {
    users: createKyselyUserStore(db, now),
    sessions: createKyselySessionStore(db, settings),
    throttle: createThrottle(createKyselyThrottleStore(db), settings.throttle),
    hasher: createArgon2Hasher({
      concurrency: settings.hashConcurrency,
      queueMax: settings.hashQueueMax,
    }),
  };
}
