import type { Kysely } from 'kysely';
import { createIndex, optional, required, userId, userIdKey } from './schema-parts.js';

/**
 * Second factors: a person's TOTP (its secret encrypted under FACTOR_KEY, never in clear; a new
 * one pending until a code confirms it) with the last time step accepted, which only an atomic
 * `where last_step < :step` update moves on, so no step is ever accepted twice for a user, on
 * any instance; and the recovery codes, kept only as hashes, each used at most once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_totp')
    .$call(userIdKey)
    // Null: no TOTP in use (never enrolled, or turned off).
    .addColumn('secret', 'text')
    // Null: no set-up waiting for its confirming code.
    .addColumn('pending_secret', 'text')
    // Kept when TOTP is turned off and on again, so an old code stays spent.
    .addColumn('last_step', 'bigint', (col) => col.notNull().defaultTo(-1))
    .$call(optional({ enabled_at: 'bigint' }))
    .$call(required({ updated_at: 'bigint' }))
    .execute();
  await db.schema
    .createTable('recovery_codes')
    .$call(userId)
    .$call(required({ code_hash: 'text' }))
    .$call(optional({ used_at: 'bigint' }))
    .$call(required({ created_at: 'bigint' }))
    .addPrimaryKeyConstraint('recovery_codes_pk', ['user_id', 'code_hash'])
    .execute();
  // The second step's challenge after a right password (src/challenge/challenge-store.ts): only
  // its SHA-256 kept, bound to the credential version, short-lived and used once.
  await db.schema
    .createTable('signin_challenges')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .$call(userId)
    .$call(required({ credential_version: 'integer', expires_at: 'bigint' }))
    .$call(optional({ used_at: 'bigint' }))
    .execute();
  await createIndex(db, 'signin_challenges_expires_at', 'signin_challenges', ['expires_at']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('signin_challenges').execute();
  await db.schema.dropTable('recovery_codes').execute();
  await db.schema.dropTable('user_totp').execute();
}
