import type { User } from '../users/store.js';
import { writeName } from '../users/writes.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

/**
 * Changes the display name only (trimmed, 1-200 characters: the caller checks); sessions stay.
 * No event, as before. 'missing' when no such user exists.
 */
export async function renameUser(
  ports: OperatorPorts,
  request: { userId: string; name: string; actor: Actor },
): Promise<User | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const renamed = await writeName(trx, request.userId, request.name, ports.now());
    if (renamed === null) return 'missing';
    await auditOperatorAction(trx, request.actor, 'user_renamed', renamed.id);
    return renamed;
  });
}
