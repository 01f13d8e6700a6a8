import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** How the second factor's counter locks: after every `maxFailures`, a lock twice the last. */
export interface FactorLockPolicy {
  maxFailures: number;
  /** The first lock's length; each later one doubles it. */
  firstLockMs: number;
  /** No lock lasts longer. */
  maxLockMs: number;
}

/** What one charge found, on the caller's clock. */
export interface FactorCharge {
  /** Let in: no lock was in force before it (the charge that sets a lock is still let in). */
  admitted: boolean;
  /** This charge set a lock: it ends at `lockedUntil` unless the code turns out right. */
  setLock: boolean;
  failures: number;
  lockedUntil: number;
  /** This charge's number, to take it back by (`refund`). */
  charge: number;
}

// Enough doublings to reach any cap a setting allows; past the last, the cap.
const lockSteps = 24;

/** The lock the (locks + 1)-th would last, for every count of locks so far, as one CASE. */
function lockEnds(policy: FactorLockPolicy, now: number) {
  const steps = Array.from({ length: lockSteps }, (_, locks) => {
    const ms = Math.min(policy.firstLockMs * 2 ** locks, policy.maxLockMs);
    // PostgreSQL cannot type `$1 + $2` (nor a CASE of bare parameters): each end is computed
    // here and cast.
    return sql`when ${locks} then cast(${now + ms} as bigint)`;
  });
  return sql`case t.locks ${sql.join(steps, sql` `)} else cast(${now + policy.maxLockMs} as bigint) end`;
}

/**
 * The second factor's failure counter of each account, in the database so every instance shares
 * it. One upsert charges an attempt before its code is checked (so parallel guesses cannot
 * overrun a limit) and says whether a lock already stood; nothing but `clear` starts it over.
 */
export function createFactorThrottleStore(db: Kysely<Database>) {
  return {
    async charge(userId: string, policy: FactorLockPolicy, now: number): Promise<FactorCharge> {
      const first = policy.maxFailures <= 1;
      // A lock stands while locked_until is ahead; the charge that reaches the next multiple of
      // maxFailures sets one. During a lock nothing is counted but the charge itself.
      const free = sql`t.locked_until <= ${now}`;
      const reaches = sql`(${free} and t.failures + 1 >= ${policy.maxFailures} * (t.locks + 1))`;
      const { rows } = await sql<{
        failures: number | string;
        charges: number | string;
        lock_charge: number | string;
        locked_until: number | string;
      }>`
        insert into factor_throttle as t
          (user_id, failures, locks, charges, lock_charge, locked_until, updated_at)
        values (${userId}, 1, ${first ? 1 : 0}, 1, ${first ? 1 : 0},
          ${first ? now + policy.firstLockMs : 0}, ${now})
        on conflict (user_id) do update set
          charges = t.charges + 1,
          failures = case when ${free} then t.failures + 1 else t.failures end,
          locks = case when ${reaches} then t.locks + 1 else t.locks end,
          lock_charge = case when ${reaches} then t.charges + 1 else t.lock_charge end,
          locked_until = case when ${reaches} then ${lockEnds(policy, now)} else t.locked_until end,
          updated_at = ${now}
        returning failures, charges, lock_charge, locked_until`.execute(db);
      const row = rows[0];
      if (row === undefined) throw new Error('factor throttle upsert returned no row');
      const charge = Number(row.charges);
      const lockedUntil = Number(row.locked_until);
      const setLock = Number(row.lock_charge) === charge;
      return {
        admitted: lockedUntil <= now || setLock,
        setLock,
        failures: Number(row.failures),
        lockedUntil,
        charge,
      };
    },

    /** A charge whose code was never checked (a store error): as if it had not been made. */
    async refund(userId: string, charge: FactorCharge): Promise<void> {
      if (!charge.admitted) return;
      await sql`
        update factor_throttle set
          failures = failures - 1,
          locks = case when lock_charge = ${charge.charge} then locks - 1 else locks end,
          locked_until = case when lock_charge = ${charge.charge} then 0 else locked_until end
        where user_id = ${userId} and failures > 0`.execute(db);
    },

    clear: (userId: string): Promise<void> => clearFactorFailures(db, userId),

    /** The lock in force on the second factor of the account with that address, or null. */
    async lockedUntilOfEmail(email: string, now: number): Promise<number | null> {
      const row = await db
        .selectFrom('factor_throttle')
        .select('locked_until')
        .where('user_id', 'in', (eb) =>
          eb.selectFrom('users').select('id').where('email', '=', email),
        )
        .executeTakeFirst();
      const until = row === undefined ? 0 : Number(row.locked_until);
      return until > now ? until : null;
    },

    /** `clear` for the account with that address, when there is one. */
    async clearOfEmail(email: string): Promise<void> {
      await db
        .deleteFrom('factor_throttle')
        .where('user_id', 'in', (eb) =>
          eb.selectFrom('users').select('id').where('email', '=', email),
        )
        .execute();
    },
  };
}

/**
 * Starts the account's second-factor count over: a right second factor, or an operator (users
 * unlock, reset-second-factor), in the caller's transaction when it has one.
 */
export async function clearFactorFailures(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom('factor_throttle').where('user_id', '=', userId).execute();
}

export type FactorThrottleStore = ReturnType<typeof createFactorThrottleStore>;
