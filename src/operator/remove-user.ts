import type { User } from '../users/store.js';
import { deleteUser } from '../users/writes.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

/**
 * Deletes the user and every session of theirs, in one transaction; the user as it was, or
 * 'missing'. No event: the user's events go with the row (an event row must name a user), so
 * the audit log will be where a removal is kept.
 */
export function removeUser(
  ports: OperatorPorts,
  request: { userId: string; actor: Actor },
): Promise<User | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const removed = await deleteUser(trx, request.userId, ports.now());
    if (removed === null) return 'missing';
    // The user's own record goes with the row; the audit log keeps the removal.
    await auditOperatorAction(trx, request.actor, 'user_removed', removed.id, {
      email: removed.email,
    });
    return removed;
  });
}
