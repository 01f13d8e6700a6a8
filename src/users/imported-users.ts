import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

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
export function usersHolding(
  db: Kysely<Database>,
  column: 'id' | 'email',
  values: readonly string[],
): Promise<Array<{ id: string; email: string }>> {
  if (values.length === 0) return Promise.resolve([]);
  return db.selectFrom('users').select(['id', 'email']).where(column, 'in', values).execute();
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
