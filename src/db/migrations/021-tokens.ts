import type { Kysely } from 'kysely';
import { createIndex, optional, required, userId } from './schema-parts.js';

/**
 * Tokens for other backends, mobile apps and scripts (adoption spec §4).
 * `token_signing_keys`: the keys session tokens (JWTs) are signed with, shared by every instance
 * on the database: the public key as a JWK, the private key sealed under the auth secret. A key
 * signs from `signs_from` (a new key is published before it signs) and is published until
 * `published_until` (null: while it is the newest), so a token outlives no key.
 * `access_tokens`: personal access tokens, kept only as SHA-256 (they are random, 178 bits).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('token_signing_keys')
    .addColumn('kid', 'text', (col) => col.primaryKey())
    .$call(
      required({
        alg: 'text',
        public_jwk: 'text',
        private_sealed: 'text',
        created_at: 'bigint',
        signs_from: 'bigint',
      }),
    )
    .$call(optional({ published_until: 'bigint' }))
    .execute();

  await db.schema
    .createTable('access_tokens')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .$call(userId)
    .$call(required({ name: 'text', token_hash: 'text', created_at: 'bigint' }))
    .$call(optional({ expires_at: 'bigint', last_used_at: 'bigint', revoked_at: 'bigint' }))
    .addUniqueConstraint('access_tokens_token_hash', ['token_hash'])
    .execute();
  await createIndex(db, 'access_tokens_user_id', 'access_tokens', ['user_id']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('access_tokens').execute();
  await db.schema.dropTable('token_signing_keys').execute();
}
