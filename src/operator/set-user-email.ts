import type { User } from '../users/store.js';
import { markVerified, writeEmail } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

export interface SetEmail {
  userId: string;
  /** Normalised (src/users/email.ts). */
  email: string;
  /** The operator knows the new address is the user's. */
  verified: boolean;
  actor: Actor;
}

/**
 * Moves the user to another address, in one transaction: every session ended, the credential
 * version moved on, the new address unverified unless `verified`, and `email_changed`
 * `{reason: 'set-email'}` recorded. 'taken' when another user has it, 'missing' when no such
 * user exists: nothing written either way.
 */
export function setUserEmail(
  ports: OperatorPorts,
  change: SetEmail,
): Promise<User | 'taken' | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const at = ports.now();
    const moved = await writeEmail(trx, change.userId, change.email, at);
    if (typeof moved === 'string') return moved;
    if (change.verified) await markVerified(trx, change.userId, at);
    await recordOperatorEvent(trx, change.actor, change.userId, 'email_changed', {
      reason: 'set-email',
    });
    return moved;
  });
}
