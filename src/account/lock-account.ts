import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { revokeUserSessions } from '../sessions/session-store.js';
import { record, type NewAccountEvent } from './events.js';
import { consume } from './tokens.js';

/**
 * "This wasn't me" (accounts spec, "Security notices"), in one transaction: the notice's `lock`
 * secret used (single use, bound to its user only: see tokens.ts), the account disabled with its
 * credential version moved on (so every other e-mailed secret, such as a reset link someone else
 * asked for, and every sign-in in flight is void), every session ended, and `account_locked`
 * recorded. An account already disabled stays so and answers the same: the holder of a valid
 * link learns nothing new. Returns the user's id, or null when the secret is not valid.
 */
export async function lockAccount(
  db: Kysely<Database>,
  lock: { token: string; now: number; event: Omit<NewAccountEvent, 'userId' | 'type'> },
): Promise<{ userId: string; endedSessions: number } | null> {
  const at = lock.now;
  return db.transaction().execute(async (trx) => {
    const token = await consume(trx, { purpose: 'lock', token: lock.token }, at);
    if (token === null || token.userId === null) return null;
    const userId = token.userId;
    const updated = await trx
      .updateTable('users')
      .set((eb) => ({
        disabled: 1,
        credential_version: eb('credential_version', '+', 1),
        updated_at: at,
      }))
      .where('id', '=', userId)
      .executeTakeFirst();
    // The claim saw the user in this transaction; a removal since rolls nothing forward.
    if (Number(updated.numUpdatedRows) !== 1) return null;
    const ended = Number((await revokeUserSessions(trx, userId, at)).numUpdatedRows);
    await record(trx, {
      ...lock.event,
      userId,
      type: 'account_locked',
      detail: { endedSessions: ended },
    });
    return { userId, endedSessions: ended };
  });
}
