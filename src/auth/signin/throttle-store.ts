import { sql, type Kysely, type RawBuilder } from 'kysely';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { Dialect } from '../../db/open.js';
import type { Database } from '../../db/schema.js';

export interface ThrottleLimit {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

export interface Charge {
  /** Failures counted in the current window, this attempt included. */
  failures: number;
  lockedUntil: number;
}

/** Failure counters that live in the database, so every instance shares them. */
export interface ThrottleStore {
  /** Counts an attempt before the password is checked (one atomic statement). */
  charge(key: string, limit: ThrottleLimit, now: number): Promise<Charge>;
  /** Takes back a charge that turned out to be a success. */
  refund(key: string, limit: ThrottleLimit): Promise<void>;
  clear(key: string): Promise<void>;
  /** Deletes every counter whose key starts with `prefix`. */
  clearPrefix(prefix: string): Promise<void>;
  /**
   * The latest lock still in force at `now` among the counters named in `keys` or starting
   * with `prefix`, on the caller's clock; null when none is locked. For admins (users unlock).
   */
  lockedUntil(keys: readonly string[], prefix: string, now: number): Promise<number | null>;
  /** Deletes counters whose window and lock are both over. */
  prune(now: number, windowMs: number): Promise<void>;
}

/**
 * The database's time in milliseconds, the same everywhere in one statement: SQLite's `now` is
 * fixed for a statement's step, PostgreSQL's `statement_timestamp()` for the statement (its
 * `clock_timestamp()` would move between the comparisons of one upsert).
 */
const databaseNow: Record<Dialect, RawBuilder<number>> = {
  sqlite: sql<number>`cast(unixepoch('subsec') * 1000 as integer)`,
  postgres: sql<number>`(extract(epoch from statement_timestamp()) * 1000)::bigint`,
};

/**
 * With `databaseClock` (the service's), windows and locks are timed by the database's clock,
 * not each instance's: instances whose clocks disagree by seconds would otherwise restart or
 * end a shared counter's window early or late. The `now` callers pass then only translates
 * `lockedUntil` onto their clock (so a Retry-After they compute is right), which keeps that
 * interface unchanged. Without it (tests, whose clocks stand still or jump), `now` is used as
 * given.
 */
export function createKyselyThrottleStore(
  db: Kysely<Database>,
  databaseClock?: Dialect,
): ThrottleStore {
  /** Now plus `offsetMs`, on the clock in use (a caller's is added here: PostgreSQL cannot type `$1 + $2`). */
  const clockOf = (now: number, offsetMs = 0) => {
    if (databaseClock === undefined) return sql<number>`${now + offsetMs}`;
    const at = databaseNow[databaseClock];
    return offsetMs === 0 ? at : sql<number>`(${at} + ${offsetMs})`;
  };
  return {
    async charge(key, limit, now) {
      const at = clockOf(now);
      const lockEnd = clockOf(now, limit.lockMs);
      const firstLock = limit.maxFailures <= 1 ? lockEnd : sql<number>`${0}`;
      const t = sql.ref('signin_throttle');
      // A window restarts when it has run out or a lock has ended; during a lock every attempt
      // still counts, so the answer (failures > maxFailures) says "locked" without a second query.
      const restart = sql`(${t}.locked_until <= ${at} and (${t}.window_started_at <= ${clockOf(now, -limit.windowMs)} or ${t}.locked_until > 0))`;
      // The database's now, to translate the lock's end; a caller's clock needs none.
      const returnAt = databaseClock === undefined ? sql`` : sql`, ${at} as "at"`;
      const result = await sql<Charge & { at?: number }>`
        insert into signin_throttle (key, failures, window_started_at, locked_until)
        values (${key}, 1, ${at}, ${firstLock})
        on conflict (key) do update set
          failures = case when ${restart} then 1 else ${t}.failures + 1 end,
          window_started_at = case when ${restart} then ${at} else ${t}.window_started_at end,
          locked_until = case
            when ${t}.locked_until > ${at} then ${t}.locked_until
            when ${restart} then ${firstLock}
            when ${t}.failures + 1 >= ${limit.maxFailures} then ${lockEnd}
            else 0 end
        returning failures, locked_until as "lockedUntil"${returnAt}`.execute(db);
      const row = result.rows[0];
      if (row === undefined) throw new Error('throttle upsert returned no row');
      const lockedUntil = Number(row.lockedUntil);
      return {
        failures: Number(row.failures),
        // On the caller's clock: as far after its `now` as the lock ends after the database's.
        lockedUntil:
          lockedUntil === 0 || row.at === undefined
            ? lockedUntil
            : lockedUntil - Number(row.at) + now,
      };
    },

    async refund(key, limit) {
      await sql`
        update signin_throttle set
          failures = failures - 1,
          locked_until = case when failures - 1 < ${limit.maxFailures} then 0 else locked_until end
        where key = ${key} and failures > 0`.execute(db);
    },

    async clear(key) {
      await db.deleteFrom('signin_throttle').where('key', '=', key).execute();
    },

    async clearPrefix(prefix) {
      // Not LIKE: `_` in a base64url digest would be a wildcard there.
      await db
        .deleteFrom('signin_throttle')
        .where(sql<string>`substr(key, 1, ${prefix.length})`, '=', prefix)
        .execute();
    },

    async lockedUntil(keys, prefix, now) {
      const at = clockOf(now);
      const { rows } = await sql<{ until: number | string | null; at: number | string }>`
        select max(locked_until) as "until", ${at} as "at" from signin_throttle
        where (key in (${sql.join(keys.length === 0 ? [''] : keys)})
          or substr(key, 1, ${prefix.length}) = ${prefix})
          and locked_until > ${at}`.execute(db);
      const row = rows[0];
      if (row === undefined || row.until === null) return null;
      return databaseClock === undefined
        ? Number(row.until)
        : Number(row.until) - Number(row.at) + now;
    },

    async prune(now, windowMs) {
      await deleteInBatches(db, (limit) =>
        db
          .deleteFrom('signin_throttle')
          .where('key', 'in', (eb) =>
            eb
              .selectFrom('signin_throttle')
              .select('key')
              .where('locked_until', '<=', clockOf(now))
              .where('window_started_at', '<=', clockOf(now, -windowMs))
              .limit(limit),
          )
          .executeTakeFirst(),
      );
    },
  };
}
