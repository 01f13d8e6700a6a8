import type { Kysely } from 'kysely';
import { createIndex, optional, required, userId } from './schema-parts.js';

/**
 * What self-service accounts stand on (issue 19): whether an address is verified, when a
 * session last proved its password (re-authentication), the secrets sent by mail, and the
 * record of security events. Times are milliseconds since the epoch, as everywhere.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_verified_at', 'bigint').execute();
  // Null: the session's sign-in (its created_at) is its last proof of the password.
  await db.schema.alterTable('sessions').addColumn('authenticated_at', 'bigint').execute();

  // An e-mailed secret: only its SHA-256 is kept (and the short code's), bound to its purpose,
  // its user, the credential version and the address it was issued for.
  await db.schema
    .createTable('account_tokens')
    .addColumn('id', 'text', (col) => col.primaryKey())
    // Null for sign-up and invitation: no user exists yet.
    .addColumn('user_id', 'text', (col) => col.references('users.id').onDelete('cascade'))
    .$call(required({ purpose: 'text' }))
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .$call(optional({ code_hash: 'text' }))
    .addColumn('code_tries_left', 'integer', (col) => col.notNull().defaultTo(0))
    .$call(optional({ credential_version: 'integer' }))
    .$call(required({ email: 'text' }))
    .$call(optional({ new_email: 'text' }))
    .$call(required({ expires_at: 'bigint' }))
    .$call(optional({ used_at: 'bigint' }))
    .$call(required({ created_at: 'bigint' }))
    .execute();
  await createIndex(db, 'account_tokens_purpose_email', 'account_tokens', ['purpose', 'email']);
  await createIndex(db, 'account_tokens_user_id', 'account_tokens', ['user_id']);

  await db.schema
    .createTable('account_events')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .$call(userId)
    .$call(required({ type: 'text', at: 'bigint', ip: 'text', device: 'text' }))
    .$call(optional({ detail: 'text' }))
    .execute();
  await createIndex(db, 'account_events_user_at', 'account_events', ['user_id', 'at']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('account_events').execute();
  await db.schema.dropTable('account_tokens').execute();
  await db.schema.alterTable('sessions').dropColumn('authenticated_at').execute();
  await db.schema.alterTable('users').dropColumn('email_verified_at').execute();
}
