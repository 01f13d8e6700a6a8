import type { Kysely } from 'kysely';

/**
 * A number each credential change (set-password, disable, enable) moves on and a hash upgrade
 * does not: a sign-in issues its session only while the version it verified is still the
 * user's (src/sessions/session-store.ts). Existing users start at 0, so no session or sign-in
 * in flight is affected by the migration itself.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('credential_version', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('credential_version').execute();
}
