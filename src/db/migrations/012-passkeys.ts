import type { Kysely } from 'kysely';
import { createIndex, optional, required, userId } from './schema-parts.js';

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
    .$call(userId)
    // base64url, as the browser sends it in an assertion's `id`.
    .addColumn('credential_id', 'text', (col) => col.notNull().unique())
    // The COSE public key, base64url: a public key, no secret.
    .$call(required({ public_key: 'text' }))
    .addColumn('counter', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('transports', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('backed_up', 'integer', (col) => col.notNull().defaultTo(0))
    .$call(required({ name: 'text', created_at: 'bigint' }))
    .$call(optional({ last_used_at: 'bigint' }))
    .execute();
  await createIndex(db, 'passkeys_user_id', 'passkeys', ['user_id']);

  await db.schema
    .createTable('passkey_challenges_used')
    // SHA-256 of the challenge: the primary key makes a second use one failed insert.
    .addColumn('challenge_hash', 'text', (col) => col.primaryKey())
    .$call(required({ expires_at: 'bigint' }))
    .execute();
  await createIndex(db, 'passkey_challenges_used_expires_at', 'passkey_challenges_used', [
    'expires_at',
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('passkey_challenges_used').execute();
  await db.schema.dropTable('passkeys').execute();
}
