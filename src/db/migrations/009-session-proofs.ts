import type { Kysely } from 'kysely';

/**
 * How each session was proved (issue 24's factor seam): the proofs of its sign-in in order,
 * space-separated (`password`, then what each check after it proved, such as a second factor),
 * so a route that needs more than a password can ask the session, and a person's sessions list
 * can say how each was signed in. Sessions from before this migration proved a password.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('proofs', 'text', (column) => column.notNull().defaultTo('password'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('proofs').execute();
}
