import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { findUserOrThrow, requireEmail, type CliContext } from '../context.js';

export const help = `Usage: gatehouse users verify-email --email <email>

Marks the user's address as verified, as the link in a "confirm your address" mail would:
for accounts an operator made (unverified until then) when REQUIRE_VERIFIED_EMAIL=true, or
when mail is off. Sessions stay. An address verified already stays as it was.`;

/** Marks a user's address verified now, unless it already is; true when it changed. */
export async function markVerified(db: Kysely<Database>, userId: string, at: number) {
  const result = await db
    .updateTable('users')
    .set({ email_verified_at: at, updated_at: at })
    .where('id', '=', userId)
    .where('email_verified_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function run(context: CliContext, values: { email?: string }) {
  const user = await findUserOrThrow(context, requireEmail(values.email));
  const changed = await markVerified(context.db, user.id, Date.now());
  context.out(
    changed ? `verified ${user.email}` : `${user.email} was verified already: nothing changed`,
  );
}
