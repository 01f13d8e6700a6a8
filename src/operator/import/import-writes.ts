import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { noPasswordHash } from '../../users/hasher.js';
import { insertImportedUsers, usersHolding } from '../../users/imported-users.js';
import type { ImportRecord } from './import-record.js';

/**
 * What of a batch's ids, addresses, identities and passkeys the store already has, each with
 * its user's `imported_at` (an earlier line of the same import has the import's time).
 */
export async function existingRows(
  db: Kysely<Database>,
  records: readonly ImportRecord[],
  identityKey: (provider: string, subject: string) => string,
) {
  const ids = records.map((record) => record.id);
  const emails = records.map((record) => record.email);
  const subjects = records.flatMap((record) =>
    record.identities.map((identity) => identity.subject),
  );
  const credentials = records.flatMap((record) => record.passkeys.map((key) => key.credentialId));
  const [byId, byEmail, identities, passkeys] = await Promise.all([
    usersHolding(db, 'id', ids),
    usersHolding(db, 'email', emails),
    subjects.length === 0
      ? []
      : db
          .selectFrom('user_identities')
          .select(['provider', 'issuer', 'subject', 'user_id'])
          .where('subject', 'in', subjects)
          .execute(),
    credentials.length === 0
      ? []
      : db
          .selectFrom('passkeys')
          .select(['credential_id', 'user_id'])
          .where('credential_id', 'in', credentials)
          .execute(),
  ]);
  const owners = [...new Set([...identities, ...passkeys].map((row) => row.user_id))];
  const importedAt = new Map(
    (await usersHolding(db, 'id', owners)).map((row) => [row.id, row.importedAt]),
  );
  const ownerOf = (userId: string) => importedAt.get(userId) ?? null;
  return {
    usersById: new Map(byId.map((row) => [row.id, row])),
    usersByEmail: new Map(byEmail.map((row) => [row.email, row])),
    // Keyed as the caller keys them (the issuer is the configured provider's), with the owner's import time.
    identities: new Map(
      identities
        .filter(
          (row) =>
            identityKey(row.provider, row.subject) ===
            `${row.provider} ${row.issuer} ${row.subject}`,
        )
        .map((row) => [`${row.provider} ${row.issuer} ${row.subject}`, ownerOf(row.user_id)]),
    ) as ReadonlyMap<string, number | null>,
    passkeys: new Map(
      passkeys.map((row) => [row.credential_id, ownerOf(row.user_id)]),
    ) as ReadonlyMap<string, number | null>,
  };
}

/**
 * Writes a batch of checked users, their identities and passkeys, in the caller's transaction.
 * An imported user keeps their id; a user without a password gets the hash nothing matches.
 */
export async function writeBatch(
  db: Kysely<Database>,
  records: readonly ImportRecord[],
  at: number,
  issuerOf: (provider: string) => string | null,
): Promise<void> {
  await insertImportedUsers(
    db,
    records.map((record) => ({
      id: record.id,
      email: record.email,
      name: record.name,
      passwordHash: record.passwordHash ?? noPasswordHash,
      emailVerifiedAt: record.emailVerifiedAt,
      createdAt: record.createdAt ?? at,
    })),
    at,
  );
  const identities = records.flatMap((record) =>
    record.identities.map((identity) => ({
      id: randomUUID(),
      user_id: record.id,
      provider: identity.provider,
      issuer: issuerOf(identity.provider) ?? '',
      subject: identity.subject,
      email: null,
      linked_at: at,
      last_used_at: null,
    })),
  );
  if (identities.length > 0) await db.insertInto('user_identities').values(identities).execute();
  const passkeys = records.flatMap((record) =>
    record.passkeys.map((passkey, index) => ({
      id: randomUUID(),
      user_id: record.id,
      credential_id: passkey.credentialId,
      public_key: passkey.publicKey,
      counter: passkey.counter,
      transports: passkey.transports.join(','),
      backed_up: passkey.backedUp ? 1 : 0,
      name: index === 0 ? 'Passkey' : `Passkey ${index + 1}`,
      created_at: at,
      last_used_at: null,
    })),
  );
  if (passkeys.length > 0) await db.insertInto('passkeys').values(passkeys).execute();
}
