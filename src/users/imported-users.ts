import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { noPasswordHash } from './hasher.js';

/** A user as an import writes them: the id and hash kept from the service they come from. */
export interface ImportedUser {
  id: string;
  /** Normalised. */
  email: string;
  name: string;
  passwordHash: string;
  emailVerifiedAt: number | null;
  createdAt: number;
}

/** The users among `values` of `column` (a batch of an import's ids or addresses). */
export async function usersHolding(
  db: Kysely<Database>,
  column: 'id' | 'email',
  values: readonly string[],
): Promise<Array<{ id: string; email: string; importedAt: number | null }>> {
  if (values.length === 0) return [];
  const rows = await db
    .selectFrom('users')
    .select(['id', 'email', 'imported_at'])
    .where(column, 'in', values)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    email: row.email,
    importedAt: row.imported_at === null ? null : Number(row.imported_at),
  }));
}

/**
 * Writes a batch of imported users in the caller's transaction (src/operator/import/), marked
 * `imported_at`: their old sessions may be exchanged (src/auth/session/legacy-exchange.ts). No
 * webhook: the application these users come from has them already.
 */
export async function insertImportedUsers(
  db: Kysely<Database>,
  users: readonly ImportedUser[],
  at: number,
): Promise<void> {
  if (users.length === 0) return;
  await db
    .insertInto('users')
    .values(
      users.map((user) => ({
        id: user.id,
        email: user.email,
        name: user.name,
        password_hash: user.passwordHash,
        disabled: 0,
        email_verified_at: user.emailVerifiedAt,
        created_at: user.createdAt,
        updated_at: at,
        imported_at: at,
      })),
    )
    .execute();
}

/**
 * Ends an imported user's old sessions not yet exchanged (src/auth/session/legacy-exchange.ts),
 * in the transaction that ends all their sessions: a password change, a lock, an operator's or
 * their own "sign out everywhere". A user made here has none: nothing is written for them.
 */
export async function closeLegacySessions(
  trx: Kysely<Database>,
  userId: string,
  at: number,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ legacy_sessions_closed_at: at })
    .where('id', '=', userId)
    .where('imported_at', 'is not', null)
    .where('legacy_sessions_closed_at', 'is', null)
    .execute();
}

/** An imported user whose old sessions may still be exchanged, or null. */
export async function legacySessionHolder(
  db: Kysely<Database>,
  userId: string,
): Promise<{ id: string; credentialVersion: number } | null> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'credential_version'])
    .where('id', '=', userId)
    .where('imported_at', 'is not', null)
    .where('legacy_sessions_closed_at', 'is', null)
    .where('disabled', '=', 0)
    .executeTakeFirst();
  return row === undefined
    ? null
    : { id: row.id, credentialVersion: Number(row.credential_version) };
}

/** Old hashes sampled at start-up: an import rarely has more than a few kinds. */
const floorSample = 1000;

/**
 * Teaches the hasher's timing floor (timing-floor.ts) the old kinds of hash imported users still
 * have, at start-up: one verification of each kind in a sample of them, and one of today's
 * argon2id (`ownHash`), so the first sign-in against an old hash already answers in the time every
 * other address does. Without imported users, nothing is read or verified.
 */
export async function learnImportedHashKinds(
  db: Kysely<Database>,
  hasher: { learn(passwordHash: string): Promise<void> },
  kindOf: (passwordHash: string) => string | null,
  ownHash: string,
): Promise<number> {
  const rows = await db
    .selectFrom('users')
    .select('password_hash')
    .where('imported_at', 'is not', null)
    .where('password_hash', 'not like', '$argon2id$%')
    .where('password_hash', '<>', noPasswordHash)
    .limit(floorSample)
    .execute();
  const kinds = new Map<string, string>();
  for (const { password_hash: hash } of rows) {
    const kind = kindOf(hash);
    if (kind !== null && !kinds.has(kind)) kinds.set(kind, hash);
  }
  if (kinds.size === 0) return 0;
  await hasher.learn(ownHash);
  for (const hash of kinds.values()) await hasher.learn(hash);
  return kinds.size;
}
