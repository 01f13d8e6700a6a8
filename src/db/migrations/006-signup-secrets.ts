import type { Kysely } from 'kysely';

/**
 * A sign-up makes no account until the address is confirmed (accounts spec, docs/behaviour.md
 * "Sign-up"): its `signup` secret keeps the argon2 hash of the password chosen, and the name
 * (migration 005's column), until the confirmation creates the user. The hash rides on the
 * secret's row like the invitation's name does: hashed, single use, expiring, and pruned with
 * the other secrets, so a sign-up nobody confirms leaves nothing behind. Null for every other
 * purpose.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('account_tokens').addColumn('password_hash', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('account_tokens').dropColumn('password_hash').execute();
}
