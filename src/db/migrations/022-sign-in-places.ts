import type { Kysely } from 'kysely';
import { createIndex, required, userId } from './schema-parts.js';

/**
 * The devices and networks each account has signed in from (src/account/new-device/): a sign-in
 * from a device and a network it has not seen is told to the owner. `kind` is `device` (`key`:
 * the SHA-256 of the user's id and the device cookie's id, so the table names no cookie and
 * links no two accounts) or `network` (`key`: the address's prefix, IPv4 /24, IPv6 /48).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sign_in_places')
    .$call(userId)
    .$call(required({ kind: 'text', key: 'text', first_seen_at: 'bigint', last_seen_at: 'bigint' }))
    .addPrimaryKeyConstraint('sign_in_places_pk', ['user_id', 'kind', 'key'])
    .execute();
  await createIndex(db, 'sign_in_places_last_seen_at', 'sign_in_places', ['last_seen_at']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sign_in_places').execute();
}
