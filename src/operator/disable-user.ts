import type { User } from '../users/store.js';
import { writeDisabled } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

/**
 * Refuses sign-in, in one transaction: the user disabled with its credential version moved on
 * (sign-ins in flight issue no session), every session ended, and `session_revoked`
 * `{reason: 'disabled'}` recorded. 'missing' when no such user exists (nothing written).
 */
export function disableUser(
  ports: OperatorPorts,
  request: { userId: string; actor: Actor },
): Promise<{ user: User; endedSessions: number } | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const changed = await writeDisabled(trx, request.userId, true, ports.now());
    if (changed === null) return 'missing';
    await recordOperatorEvent(trx, request.actor, request.userId, 'session_revoked', {
      reason: 'disabled',
    });
    return changed;
  });
}
