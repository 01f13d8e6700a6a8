import type { Kysely } from 'kysely';

/**
 * SECOND_FACTOR=required, hardened: a sign-in challenge records what it was issued for
 * (`second_step` after `second_factor_required`, `enrolment` after
 * `second_factor_enrolment_required`, `passkey` after `passkey_required`), so it is taken for
 * that and nothing else; rows from before are second steps, the one kind there was before
 * enrolment. And recovery codes made at an enrolment during sign-in are marked until new ones
 * are made in `/account`: their one showing may never have reached the person (a double
 * submit, an app that ignores them), so the account page asks for new ones.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('signin_challenges')
    .addColumn('purpose', 'text', (col) => col.notNull().defaultTo('second_step'))
    .execute();
  await db.schema.alterTable('user_totp').addColumn('codes_made_at_signin', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('user_totp').dropColumn('codes_made_at_signin').execute();
  await db.schema.alterTable('signin_challenges').dropColumn('purpose').execute();
}
