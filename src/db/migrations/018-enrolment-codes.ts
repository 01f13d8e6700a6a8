import type { Kysely } from 'kysely';

/**
 * SECOND_FACTOR=required, enrolment at sign-in proven beyond the password (issue 35): an
 * enrolment challenge carries the short code mailed to the account's address with it, kept
 * only as a keyed digest (src/account/model/secrets.ts's), with the tries it has left. The code
 * lives and dies with its challenge: it expires with it and is spent when the enrolment spends
 * it. Challenges from before have no code (null, no tries): they can no longer enrol, and the
 * person signs in again for one that has.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('signin_challenges').addColumn('code_hash', 'text').execute();
  await db.schema
    .alterTable('signin_challenges')
    .addColumn('code_tries_left', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('signin_challenges').dropColumn('code_tries_left').execute();
  await db.schema.alterTable('signin_challenges').dropColumn('code_hash').execute();
}
