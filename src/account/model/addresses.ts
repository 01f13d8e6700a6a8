import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { voidUnclaimedSecrets } from '../../users/writes.js';
import { record } from './events.js';
import type { EventClient } from './credential-change.js';
import { emitUserWebhook } from '../../webhooks/emit.js';

/*
 * The account's address: who holds one, whether it is proven, and the accounts made from a
 * proven one. The account wing asks these here, never of the users table itself.
 */

/** The account that has this normalised address, or null: "is this address taken?". */
export async function accountHolding(
  db: Kysely<Database>,
  email: string,
): Promise<{ id: string; name: string; disabled: boolean } | null> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'name', 'disabled'])
    .where('email', '=', email)
    .executeTakeFirst();
  return row === undefined
    ? null
    : { id: row.id, name: row.name, disabled: Number(row.disabled) === 1 };
}

/** Whether the user's address is verified (false for no such user). */
export async function isVerified(db: Kysely<Database>, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('email_verified_at')
    .where('id', '=', userId)
    .executeTakeFirst();
  return row !== undefined && row.email_verified_at !== null;
}

/**
 * An account made in the caller's transaction from a mailed secret that came back (an
 * invitation accepted, a sign-up confirmed: its address `verified`, the secret went through
 * that mailbox) or from an identity provider's sign-in (verified only as the provider asserts
 * it): its name (else the address's local part, as `users add` does) and password hash, and
 * `account_created` recorded with how it came to be. The unique address decides a race: null
 * when an account took the address meanwhile (another transaction won).
 */
export async function createAccount(
  trx: Kysely<Database>,
  account: {
    email: string;
    name: string | null;
    passwordHash: string;
    verified: boolean;
    at: number;
    event: EventClient;
    via: Record<string, unknown>;
  },
): Promise<{ userId: string; email: string } | null> {
  const { email, at } = account;
  const userId = randomUUID();
  const created = await trx
    .insertInto('users')
    .values({
      id: userId,
      email,
      name:
        account.name !== null && account.name !== '' ? account.name : (email.split('@')[0] ?? ''),
      password_hash: account.passwordHash,
      disabled: 0,
      email_verified_at: account.verified ? at : null,
      created_at: at,
      updated_at: at,
    })
    .onConflict((conflict) => conflict.column('email').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (created === undefined) return null;
  await voidUnclaimedSecrets(trx, email, at);
  await record(trx, { ...account.event, userId, type: 'account_created', detail: account.via });
  await emitUserWebhook(trx, 'user.created', userId, at);
  return { userId, email };
}
