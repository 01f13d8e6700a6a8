import type { User } from '../users/store.js';
import { markVerified, readUser } from '../users/writes.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

/**
 * Marks the user's address verified, as the link in a "confirm your address" mail would;
 * sessions stay, and an address verified already stays as it was (`changed: false`). No event:
 * AccountEventType has none for a verification. 'missing' when no such user exists.
 */
export function verifyUserEmail(
  ports: OperatorPorts,
  request: { userId: string; actor: Actor },
): Promise<{ user: User; changed: boolean } | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const user = await readUser(trx, request.userId);
    if (user === null) return 'missing';
    const changed = await markVerified(trx, user.id, ports.now());
    if (changed) await auditOperatorAction(trx, request.actor, 'email_verified', user.id);
    return { user, changed };
  });
}
