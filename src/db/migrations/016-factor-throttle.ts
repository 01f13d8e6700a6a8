import type { Kysely } from 'kysely';
import { required, userIdKey } from './schema-parts.js';

/**
 * Second-factor failures, counted per account apart from the password's counters: a right
 * password never clears them (only a right second factor or an operator does) and a device
 * cookie never spares them, so whoever holds the password gets a bounded number of code guesses
 * in all, not per window. `charges` counts every charge and `lock_charge` names the one that set
 * the lock in force, so a charge can tell from the row it returns whether it was let in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('factor_throttle')
    .$call(userIdKey)
    .$call(
      required({
        // Wrong codes since the last right second factor (or an operator's unlock).
        failures: 'integer',
        // Locks set since then: each lasts twice as long as the one before, up to a cap.
        locks: 'integer',
        charges: 'integer',
        lock_charge: 'integer',
        locked_until: 'bigint',
        updated_at: 'bigint',
      }),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('factor_throttle').execute();
}
