import type { Kysely } from 'kysely';

/**
 * Second factors: a person's TOTP (its secret encrypted under FACTOR_KEY, never in clear; a new
 * one pending until a code confirms it) with the last time step accepted, which only an atomic
 * `where last_step < :step` update moves on, so no step is ever accepted twice for a user, on
 * any instance; and the recovery codes, kept only as hashes, each used at most once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_totp')
    .addColumn('user_id', 'text', (col) =>
      col.primaryKey().references('users.id').onDelete('cascade'),
    )
    // Null: no TOTP in use (never enrolled, or turned off).
    .addColumn('secret', 'text')
    // Null: no set-up waiting for its confirming code.
    .addColumn('pending_secret', 'text')
    // Kept when TOTP is turned off and on again, so an old code stays spent.
    .addColumn('last_step', 'bigint', (col) => col.notNull().defaultTo(-1))
    .addColumn('enabled_at', 'bigint')
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable('recovery_codes')
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('recovery_codes_pk', ['user_id', 'code_hash'])
    .execute();
  // The second step's challenge after a right password (src/challenge/challenge-store.ts): only
  // its SHA-256 kept, bound to the credential version, short-lived and used once.
  await db.schema
    .createTable('signin_challenges')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_version', 'integer', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('signin_challenges_expires_at')
    .on('signin_challenges')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('signin_challenges').execute();
  await db.schema.dropTable('recovery_codes').execute();
  await db.schema.dropTable('user_totp').execute();
}
