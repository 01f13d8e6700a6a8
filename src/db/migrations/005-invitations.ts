import type { Kysely } from 'kysely';

/**
 * An invitation (`gatehouse users invite --name N`) keeps the name the operator gave until the
 * account exists. It is an e-mailed secret like the others (hashed, single use, expiring, pruned
 * with them), so the name rides on its row rather than in a table of its own: one nullable
 * column, null for every other purpose.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('account_tokens').addColumn('name', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('account_tokens').dropColumn('name').execute();
}
