import type { Kysely } from 'kysely';

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
    .addColumn('purpose', 'text', (col) => col.notNull())
    .addColumn('token_hash', 'text', (col) => col.notNull().unique())
    .addColumn('code_hash', 'text')
    .addColumn('code_tries_left', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('credential_version', 'integer')
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('new_email', 'text')
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('account_tokens_purpose_email')
    .on('account_tokens')
    .columns(['purpose', 'email'])
    .execute();
  await db.schema
    .createIndex('account_tokens_user_id')
    .on('account_tokens')
    .column('user_id')
    .execute();

  await db.schema
    .createTable('account_events')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('at', 'bigint', (col) => col.notNull())
    .addColumn('ip', 'text', (col) => col.notNull())
    .addColumn('device', 'text', (col) => col.notNull())
    .addColumn('detail', 'text')
    .execute();
  await db.schema
    .createIndex('account_events_user_at')
    .on('account_events')
    .columns(['user_id', 'at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('account_events').execute();
  await db.schema.dropTable('account_tokens').execute();
  await db.schema.alterTable('sessions').dropColumn('authenticated_at').execute();
  await db.schema.alterTable('users').dropColumn('email_verified_at').execute();
}
