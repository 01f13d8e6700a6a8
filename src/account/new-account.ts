import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { record, type NewAccountEvent } from './events.js';

/**
 * An account made from a mailed secret that came back (an invitation accepted, a sign-up
 * confirmed), in the caller's transaction: its address verified (the secret went through that
 * mailbox), its name (else the address's local part, as `users add` does) and password hash,
 * and `account_created` recorded with how it came to be. The unique address decides a race:
 * null when an account took the address meanwhile (another transaction won).
 */
export async function createVerifiedAccount(
  trx: Kysely<Database>,
  account: {
    email: string;
    name: string | null;
    passwordHash: string;
    at: number;
    event: Omit<NewAccountEvent, 'userId' | 'type'>;
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
      email_verified_at: at,
      created_at: at,
      updated_at: at,
    })
    .onConflict((conflict) => conflict.column('email').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (created === undefined) return null;
  await record(trx, { ...account.event, userId, type: 'account_created', detail: account.via });
  return { userId, email };
}
