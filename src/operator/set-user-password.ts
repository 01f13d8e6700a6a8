import type { Throttle } from '../auth/signin/throttle.js';
import type { User } from '../users/store.js';
import { writePasswordHash } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

/**
 * A password the operator set, in one transaction: the new hash, the credential version moved
 * on, every session ended, and `password_changed` `{reason: 'set-password'}` recorded. Then the
 * sign-in lock on the email is lifted (throttle counters follow the commit). 'missing' when no
 * such user exists (nothing written).
 */
export async function setUserPassword(
  ports: OperatorPorts & { throttle: Pick<Throttle, 'unlockEmail'> },
  request: { userId: string; passwordHash: string; actor: Actor },
): Promise<User | 'missing'> {
  const user = await ports.db.transaction().execute(async (trx) => {
    const changed = await writePasswordHash(trx, request.userId, request.passwordHash, ports.now());
    if (changed === null) return null;
    await recordOperatorEvent(trx, request.actor, request.userId, 'password_changed', {
      reason: 'set-password',
    });
    return changed;
  });
  if (user === null) return 'missing';
  await ports.throttle.unlockEmail(user.email);
  return user;
}
