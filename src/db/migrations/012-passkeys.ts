import type { Kysely } from 'kysely';

/**
 * Passkeys (WebAuthn discoverable credentials): each person's registered credentials, and the
 * challenges already answered, so a challenge is accepted once however often its cookie is
 * replayed. Times are milliseconds since the epoch, as everywhere.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    // Opaque, and not the credential id: the list and its routes never show a credential id.
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    // base64url, as the browser sends it in an assertion's `id`.
    .addColumn('credential_id', 'text', (col) => col.notNull().unique())
    // The COSE public key, base64url: a public key, no secret.
    .addColumn('public_key', 'text', (col) => col.notNull())
    .addColumn('counter', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('transports', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('backed_up', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_user_id').on('passkeys').column('user_id').execute();

  await db.schema
    .createTable('passkey_challenges_used')
    // SHA-256 of the challenge: the primary key makes a second use one failed insert.
    .addColumn('challenge_hash', 'text', (col) => col.primaryKey())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('passkey_challenges_used_expires_at')
    .on('passkey_challenges_used')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('passkey_challenges_used').execute();
  await db.schema.dropTable('passkeys').execute();
}
