import type { Throttle } from '../auth/signin/throttle.js';
import { readUser } from '../users/writes.js';
import type { Actor, OperatorPorts } from './actor.js';
import { unlockEmail } from './unlock-email.js';

/**
 * `unlockEmail` for a user named by id (the admin API names users by id): the lock on the
 * user's current address lifted. 'missing' when no such user exists.
 */
export async function unlockUser(
  ports: OperatorPorts & { throttle: Pick<Throttle, 'unlockEmail' | 'emailLockedUntil'> },
  request: { userId: string; actor: Actor },
): Promise<{ lockedUntil: number | null } | 'missing'> {
  const user = await readUser(ports.db, request.userId);
  if (user === null) return 'missing';
  return unlockEmail(ports, { email: user.email, actor: request.actor });
}
