import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** What the operator's list and show read of a user (src/operator/find-users.ts): no hash. */
export interface UserListingRow {
  id: string;
  email: string;
  name: string;
  disabled: number;
  email_verified_at: number | null;
  created_at: number;
}

const columns = ['id', 'email', 'name', 'disabled', 'email_verified_at', 'created_at'] as const;

export async function readListingRow(
  db: Kysely<Database>,
  id: string,
): Promise<UserListingRow | null> {
  const row = await db.selectFrom('users').select(columns).where('id', '=', id).executeTakeFirst();
  return row ?? null;
}

/** `%`, `_` and the escape itself taken literally in a LIKE pattern. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`);

/**
 * Up to `limit` users by address after `after`; `query` (non-empty) keeps those whose address
 * or name holds it, case aside.
 */
export async function pageListingRows(
  db: Kysely<Database>,
  page: { after?: string; query?: string; limit: number },
): Promise<UserListingRow[]> {
  let select = db.selectFrom('users').select(columns).orderBy('email').limit(page.limit);
  if (page.after !== undefined) select = select.where('email', '>', page.after);
  if (page.query !== undefined && page.query !== '') {
    const pattern = `%${likeLiteral(page.query.toLowerCase())}%`;
    select = select.where(
      (eb) =>
        sql<boolean>`(lower(${eb.ref('email')}) like ${pattern} escape '\\' or lower(${eb.ref('name')}) like ${pattern} escape '\\')`,
    );
  }
  return select.execute();
}
