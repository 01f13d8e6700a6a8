import type { FirebaseScryptParams } from './users/legacy-hashes.cjs';
import { createLegacySessionStore } from './users/legacy-sessions.js';
import type { Kysely } from 'kysely';
import { createLastSeen } from './sessions/last-seen.js';
import { createKyselySessionStore } from './sessions/session-store.js';
import { createThrottle, type ThrottleSettings } from './auth/signin/throttle.js';
import { createKyselyThrottleStore } from './auth/signin/throttle-store.js';
import type { RawHandles } from './db/open.js';
import type { Database } from './db/schema.js';
import { noObserver, type Observer } from './observe/observer.js';
import { createArgon2Hasher } from './users/hasher.js';
import { createKyselyUserStore } from './users/kysely-store.js';

/** `sqlite` / `pgPool`: the raw handle `openDatabase` gave with `db`. */
export interface ServiceSettings extends RawHandles {
  throttle: ThrottleSettings;
  sessionsPerUserMax?: number;
  /** Named PostgreSQL statements (`DATABASE_PREPARED`); off behind a transaction-mode pooler. */
  databasePrepared?: boolean;
  /** The operator's log, for what a store finds about the database at run time. */
  log?: { warn(fields: object, message: string): void };
  hashConcurrency: number;
  hashQueueMax: number;
  hashNice: number;
  /** For imported Firebase hashes (`IMPORT_FIREBASE_SCRYPT`). */
  firebaseScrypt?: FirebaseScryptParams | null;
}

/** The stores and workers the app and the CLI share, over one open database. */
export function createServices(
  db: Kysely<Database>,
  settings: ServiceSettings,
  injectedNow?: () => number,
  observer: Observer = noObserver,
) {
  const now = injectedNow ?? (() => Date.now());
  const hasher = createArgon2Hasher({
    concurrency: settings.hashConcurrency,
    queueMax: settings.hashQueueMax,
    nice: settings.hashNice,
    firebase: settings.firebaseScrypt ?? undefined,
  });
  observer.watchHasher(hasher.load, hasher.limits);
  const sessions = createKyselySessionStore(db, settings, observer);
  return {
    users: createKyselyUserStore(db, now),
    sessions,
    legacySessions: createLegacySessionStore(db, sessions),
    throttle: createThrottle(
      // The service times shared counters by the database's clock; a test's injected clock
      // (which stands still or jumps) must time them itself.
      createKyselyThrottleStore(
        db,
        injectedNow === undefined
          ? settings.pgPool === undefined
            ? 'sqlite'
            : 'postgres'
          : undefined,
      ),
      settings.throttle,
      observer.throttleLock,
    ),
    hasher,
    /** "Last seen" of live sessions, written on a timer (stopped by the drain). */
    lastSeen: createLastSeen({ db, now }),
  };
}
