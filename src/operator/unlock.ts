import { createFactorThrottleStore } from '../account/model/factor-throttle-store.js';
import type { Throttle } from '../auth/signin/throttle.js';
import { readUser } from '../users/writes.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

/**
 * Lifts the sign-in lock failed attempts put on an email, and starts its counters over, whether
 * or not a user has that email (throttling counts unknown emails alike); the second-factor count
 * of the account with that email (model/factor-throttle.ts) starts over too. `lockedUntil`: when
 * the latest lock lifted would have ended (ms), or null when none was in force. No event: the
 * email may name no user.
 */
export async function unlockEmail(
  ports: OperatorPorts & {
    throttle: Pick<Throttle, 'unlockEmail' | 'emailLockedUntil'>;
  },
  request: { email: string; actor: Actor },
): Promise<{ lockedUntil: number | null }> {
  const now = ports.now();
  const factors = createFactorThrottleStore(ports.db);
  const locks = [
    await ports.throttle.emailLockedUntil(request.email, now),
    await factors.lockedUntilOfEmail(request.email, now),
  ].filter((until) => until !== null);
  await ports.throttle.unlockEmail(request.email);
  await factors.clearOfEmail(request.email);
  const lockedUntil = locks.length === 0 ? null : Math.max(...locks);
  await auditOperatorAction(ports.db, request.actor, 'email_unlocked', null, {
    email: request.email,
  });
  return { lockedUntil };
}

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
