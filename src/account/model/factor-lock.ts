import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { noPasswordHash } from '../../users/hasher.js';

/**
 * Holds the account's row for the rest of the caller's transaction, so changes of one account's
 * second factors run one at a time and a guard read after it ("is this the last factor?") still
 * holds when the change is written: a row lock on PostgreSQL (the second waits for the first to
 * commit, then reads what it wrote), the one writer on SQLite. A no-op update, so it works alike
 * on both.
 */
export async function lockFactors(trx: Kysely<Database>, userId: string): Promise<void> {
  await trx
    .updateTable('users')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', userId)
    .execute();
}

/**
 * Every live sign-in challenge of the account spent, in the caller's transaction: its factors
 * changed (TOTP on or off, a passkey added or removed, an operator's reset), so what a
 * challenge was issued for may no longer hold (src/challenge/challenge-store.ts).
 */
export async function voidChallenges(
  trx: Kysely<Database>,
  userId: string,
  now: number,
): Promise<void> {
  await trx
    .updateTable('signin_challenges')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

/** The account's second factors as the transaction sees them, after lockFactors. */
export async function lockedFactors(
  trx: Kysely<Database>,
  userId: string,
): Promise<{ totp: boolean; passkeys: number }> {
  const [totp, passkeys] = await Promise.all([
    trx
      .selectFrom('user_totp')
      .select('user_id')
      .where('user_id', '=', userId)
      .where('secret', 'is not', null)
      .executeTakeFirst(),
    trx
      .selectFrom('passkeys')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  ]);
  return { totp: totp !== undefined, passkeys: Number(passkeys.n) };
}

/**
 * How many ways in the account has (its password, each passkey, each identity at a provider),
 * as the transaction sees them after lockFactors.
 */
export async function lockedWaysIn(trx: Kysely<Database>, userId: string): Promise<number> {
  const [user, identities, factors] = await Promise.all([
    trx.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst(),
    trx
      .selectFrom('user_identities')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
    lockedFactors(trx, userId),
  ]);
  const password = user !== undefined && user.password_hash !== noPasswordHash ? 1 : 0;
  return password + Number(identities.n) + factors.passkeys;
}

/** Whether the account holds this passkey or identity, as the transaction sees it. */
export async function holds(
  trx: Kysely<Database>,
  table: 'passkeys' | 'user_identities',
  id: string,
  userId: string,
): Promise<boolean> {
  const row = await trx
    .selectFrom(table)
    .select('id')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}
