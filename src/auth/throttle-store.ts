import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

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
  /** Deletes counters whose window and lock are both over. */
  prune(now: number, windowMs: number): Promise<void>;
}

export function createKyselyThrottleStore(db: Kysely<Database>): ThrottleStore {
  return {
    async charge(key, limit, now) {
      const lockEnd = now + limit.lockMs;
      const firstLock = limit.maxFailures <= 1 ? lockEnd : 0;
      const t = sql.ref('signin_throttle');
      // A window restarts when it has run out or a lock has ended; during a lock every attempt
      // still counts, so the answer (failures > maxFailures) says "locked" without a second query.
      const restart = sql`(${t}.locked_until <= ${now} and (${t}.window_started_at <= ${now - limit.windowMs} or ${t}.locked_until > 0))`;
      const result = await sql<Charge>`
        insert into signin_throttle (key, failures, window_started_at, locked_until)
        values (${key}, 1, ${now}, ${firstLock})
        on conflict (key) do update set
          failures = case when ${restart} then 1 else ${t}.failures + 1 end,
          window_started_at = case when ${restart} then ${now} else ${t}.window_started_at end,
          locked_until = case
            when ${t}.locked_until > ${now} then ${t}.locked_until
            when ${restart} then ${firstLock}
            when ${t}.failures + 1 >= ${limit.maxFailures} then ${lockEnd}
            else 0 end
        returning failures, locked_until as "lockedUntil"`.execute(db);
      const row = result.rows[0];
      if (row === undefined) throw new Error('throttle upsert returned no row');
      return { failures: Number(row.failures), lockedUntil: Number(row.lockedUntil) };
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

    async prune(now, windowMs) {
      await db
        .deleteFrom('signin_throttle')
        .where('window_started_at', '<=', now - windowMs)
        .where('locked_until', '<=', now)
        .execute();
    },
  };
}
