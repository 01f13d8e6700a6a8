import type { Throttle } from '../auth/signin/throttle.js';
import type { User } from '../users/store.js';
import { writeDisabled } from '../users/writes.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

/**
 * Allows sign-in again, in one transaction: the user enabled with its credential version moved
 * on, and "this wasn't me" links mailed before voided (they may have reached whoever had the
 * account). Then the sign-in lock on the email is lifted: throttle counters are no record of the
 * user's, so they follow the commit. No event: AccountEventType has none for it.
 * 'missing' when no such user exists (nothing written).
 */
export async function enableUser(
  ports: OperatorPorts & { throttle: Pick<Throttle, 'unlockEmail'> },
  request: { userId: string; actor: Actor },
): Promise<User | 'missing'> {
  const changed = await ports.db.transaction().execute(async (trx) => {
    const enabled = await writeDisabled(trx, request.userId, false, ports.now());
    if (enabled !== null)
      await auditOperatorAction(trx, request.actor, 'user_enabled', request.userId);
    return enabled;
  });
  if (changed === null) return 'missing';
  await ports.throttle.unlockEmail(changed.user.email);
  return changed.user;
}
