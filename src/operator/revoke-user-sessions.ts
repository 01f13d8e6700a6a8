import type { Observer } from '../observe/observer.js';
import { revokeUserSessions } from '../sessions/session-store.js';
import { endHeldCredentials } from '../users/held-credentials.js';
import type { User } from '../users/store.js';
import { readUser } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

/**
 * Ends every session of the user now, in one transaction with `session_revoked` `{sessions: n}`;
 * the user can sign in again. 'missing' when no such user exists (nothing written). `observer`
 * (the service's metrics; the CLI has none) counts the sessions ended once they are.
 */
export async function revokeUserSessionsNow(
  ports: OperatorPorts & { observer?: Pick<Observer, 'sessionsRevoked'> },
  request: { userId: string; actor: Actor },
): Promise<{ user: User; revoked: number } | 'missing'> {
  const result = await ports.db.transaction().execute(async (trx) => {
    const user = await readUser(trx, request.userId);
    if (user === null) return 'missing' as const;
    const ended = await revokeUserSessions(trx, user.id, ports.now());
    await endHeldCredentials(trx, user.id, ports.now());
    const revoked = Number(ended.numUpdatedRows);
    await recordOperatorEvent(trx, request.actor, user.id, 'session_revoked', {
      sessions: revoked,
    });
    return { user, revoked };
  });
  if (result !== 'missing') ports.observer?.sessionsRevoked('user', result.revoked);
  return result;
}
