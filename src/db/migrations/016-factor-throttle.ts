import type { Kysely } from 'kysely';

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
    .addColumn('user_id', 'text', (col) =>
      col.primaryKey().references('users.id').onDelete('cascade'),
    )
    // Wrong codes since the last right second factor (or an operator's unlock).
    .addColumn('failures', 'integer', (col) => col.notNull())
    // Locks set since then: each lasts twice as long as the one before, up to a cap.
    .addColumn('locks', 'integer', (col) => col.notNull())
    .addColumn('charges', 'integer', (col) => col.notNull())
    .addColumn('lock_charge', 'integer', (col) => col.notNull())
    .addColumn('locked_until', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('factor_throttle').execute();
}
