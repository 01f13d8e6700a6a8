import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { NewAccountEvent } from '../model/events.js';
import { consumeById, findLive, matchCode } from '../model/secrets.js';
import { accountHolding, createAccount } from '../model/addresses.js';

/** A sign-up waiting for its confirmation: its secret's row, not yet used. */
export interface PendingSignup {
  id: string;
  /** The normalised address signed up with (the mail went there). */
  email: string;
  name: string | null;
  /** The argon2 hash the account gets: the password chosen at the confirmation. */
  passwordHash: string;
}

/**
 * The pending sign-up a link token or a mailed code names, without using it: null when there
 * is none (unknown, used, expired) or an account has the address by now (the sign-up is void).
 * A link is only read, so a page's GET and a mail scanner spend nothing; a code guess spends a
 * try of every live sign-up code of the address (committed), as any code guess does, but the
 * secret stays unused until `completeSignup`: a wrong password does not spend it.
 */
export async function findPendingSignup(
  db: Kysely<Database>,
  secret: { token: string } | { email: string; code: string },
  now: number,
): Promise<PendingSignup | null> {
  let id: string;
  if ('token' in secret) {
    const live = await findLive(db, 'signup', secret.token, now);
    if (live === null) return null;
    id = live.id;
  } else {
    const { email, code } = secret;
    const match = await db
      .transaction()
      .execute((trx) => matchCode(trx, { purpose: 'signup', email, code }, now));
    if (match === null) return null;
    id = match.id;
  }
  const row = await db
    .selectFrom('account_tokens')
    .select(['id', 'email', 'name', 'password_hash'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (row === undefined || row.password_hash === null) return null;
  if ((await accountHolding(db, row.email)) !== null) return null;
  return { id: row.id, email: row.email, name: row.name, passwordHash: row.password_hash };
}

/**
 * Confirms a sign-up with the password chosen at its confirmation, in one transaction: the
 * secret used (single use; a userless claim, so it holds only while no account has the
 * address), the user created with the address verified (the link or code came through that
 * mailbox), the name typed at sign-up or at the confirmation (else the address's local part, as
 * `users add` does) and the hash of the password chosen, and `account_created` recorded with
 * `{via: "signup"}`. No session is created. Null when the secret was used or voided meanwhile,
 * or an account took the address.
 */
export async function completeSignup(
  db: Kysely<Database>,
  pending: PendingSignup,
  done: { now: number; event: Omit<NewAccountEvent, 'userId' | 'type'> },
): Promise<{ userId: string; email: string } | null> {
  const at = done.now;
  return db.transaction().execute(async (trx) => {
    if (!(await consumeById(trx, pending.id, 'signup', at))) return null;
    return createAccount(trx, {
      verified: true,
      email: pending.email,
      name: pending.name,
      passwordHash: pending.passwordHash,
      at,
      event: done.event,
      via: { via: 'signup' },
    });
  });
}
