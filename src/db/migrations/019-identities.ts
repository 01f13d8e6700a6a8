import type { CreateTableBuilder, Kysely } from 'kysely';
import { createIndex, optional, required, userId } from './schema-parts.js';

/**
 * Sign-in with identity providers (adoption spec §1). An identity is (provider, subject), the
 * provider's own name for the person, never an address: `user_identities` links one to an
 * account. An unknown identity whose address belongs to an account is only offered for
 * linking: `identity_link_offers` keeps that offer (SHA-256 of the browser's cookie) until the
 * person proves the account in that browser. A sign-in challenge records the proof it stands
 * for (`first_proof`): a provider's sign-in waiting for its second step is not a password.
 */
/**
 * An identity's columns, linked or offered: the account, the provider, the issuer the subject is unique at (an
 * OpenID Connect issuer, GitHub's base URL: a provider id pointed at another service never takes
 * over the first one's identities), the subject, and the address it gave (shown to the owner).
 */
function identityColumns<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table
    .$call(userId)
    .$call(required({ provider: 'text', issuer: 'text', subject: 'text' }))
    .$call(optional({ email: 'text' }));
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_identities')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .$call(identityColumns)
    .$call(required({ linked_at: 'bigint' }))
    .$call(optional({ last_used_at: 'bigint' }))
    .addUniqueConstraint('user_identities_provider_issuer_subject', [
      'provider',
      'issuer',
      'subject',
    ])
    .execute();
  await createIndex(db, 'user_identities_user_id', 'user_identities', ['user_id']);

  await db.schema
    .createTable('identity_link_offers')
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .$call(identityColumns)
    .$call(required({ expires_at: 'bigint' }))
    .$call(optional({ used_at: 'bigint' }))
    .execute();
  await createIndex(db, 'identity_link_offers_expires_at', 'identity_link_offers', ['expires_at']);

  await db.schema
    .alterTable('signin_challenges')
    .addColumn('first_proof', 'text', (col) => col.notNull().defaultTo('password'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('signin_challenges').dropColumn('first_proof').execute();
  await db.schema.dropTable('identity_link_offers').execute();
  await db.schema.dropTable('user_identities').execute();
}
