import type { Kysely } from 'kysely';
import { createIndex, required, userId } from './schema-parts.js';

/**
 * Users carried over from another service (adoption spec §3). `imported_at` marks a user an
 * import made: only such a user's old session cookies are exchanged. `legacy_sessions_closed_at`
 * is set by anything that ends all of a user's sessions (a password change, a lock, an
 * operator's revoke): old cookies not yet exchanged end with them. `legacy_sessions` keeps each
 * old token exchanged (SHA-256) with the one session it became, until the token would have
 * expired, so the same token never opens a second session.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('imported_at', 'bigint').execute();
  await db.schema.alterTable('users').addColumn('legacy_sessions_closed_at', 'bigint').execute();
  await db.schema
    .createTable('legacy_sessions')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .$call(userId)
    .$call(required({ session_id: 'text', created_at: 'bigint', expires_at: 'bigint' }))
    .execute();
  await createIndex(db, 'legacy_sessions_user_id', 'legacy_sessions', ['user_id']);
  await createIndex(db, 'legacy_sessions_expires_at', 'legacy_sessions', ['expires_at']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('legacy_sessions').execute();
  await db.schema.alterTable('users').dropColumn('legacy_sessions_closed_at').execute();
  await db.schema.alterTable('users').dropColumn('imported_at').execute();
}
