import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { pruneAccountRecords } from '../account/wing.js';
import type { Config } from '../config/index.js';
import type { Database } from '../db/schema.js';
import type { createServices } from '../services.js';
import { learnImportedHashKinds } from '../users/imported-users.js';
import { unknownUserPasswordHash } from '../users/hasher.js';
import { readHash } from '../users/legacy-hashes.cjs';

/*
 * What a running service does in the background besides answering: rows past their use pruned
 * on a timer, and the old hash kinds of imported users timed once at start-up.
 */

type Services = ReturnType<typeof createServices>;

const pruneIntervalMs = 10 * 60 * 1000;

/**
 * In the background, on the hashing threads: the kinds of old hash imported users still have,
 * timed once each, so the first sign-in against one answers in the time every address does.
 */
export function learnOldHashKinds(
  db: Kysely<Database>,
  services: Pick<Services, 'hasher'>,
  config: Config,
  log: FastifyBaseLogger,
): void {
  const kindOf = (hash: string) => {
    const reading = readHash(hash, config.firebaseScrypt);
    return reading.ok ? reading.cost : null;
  };
  learnImportedHashKinds(db, services.hasher, kindOf, unknownUserPasswordHash)
    .then((kinds) => {
      if (kinds > 0) log.info({ kinds }, 'timed the old password hash kinds of imported users');
    })
    .catch((error: unknown) => log.warn({ err: error }, 'could not time the old hash kinds'));
}

/** Every ten minutes, rows past their use: throttle entries, sessions, account records. */
export function schedulePruning(
  db: Kysely<Database>,
  services: Pick<Services, 'throttle' | 'sessions' | 'legacySessions'>,
  config: Config,
  log: FastifyBaseLogger,
): NodeJS.Timeout {
  const prune = setInterval(() => {
    const now = Date.now();
    Promise.all([
      services.throttle.prune(now),
      services.sessions.prune(now - config.session.absoluteMaxAgeSeconds * 1000),
      // Old tokens past their own expiry (and its 15 s of tolerance) are never taken again.
      services.legacySessions.prune(now - 15_000),
      // Events past what a user's list shows; secrets a day after they expired or were used;
      // audit entries past AUDIT_RETENTION_DAYS.
      pruneAccountRecords(db, now, config.auditRetentionDays),
    ]).catch((error: unknown) => log.warn({ err: error }, 'pruning old rows failed'));
  }, pruneIntervalMs);
  prune.unref();
  return prune;
}
