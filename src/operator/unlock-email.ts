import type { Throttle } from '../auth/throttle.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

/**
 * Lifts the sign-in lock failed attempts put on an email, and starts its counters over, whether
 * or not a user has that email (throttling counts unknown emails alike). `lockedUntil`: when the
 * lock lifted would have ended (ms), or null when none was in force. No event: the email may
 * name no user.
 */
export async function unlockEmail(
  ports: OperatorPorts & {
    throttle: Pick<Throttle, 'unlockEmail' | 'emailLockedUntil'>;
  },
  request: { email: string; actor: Actor },
): Promise<{ lockedUntil: number | null }> {
  const lockedUntil = await ports.throttle.emailLockedUntil(request.email, ports.now());
  await ports.throttle.unlockEmail(request.email);
  await auditOperatorAction(ports.db, request.actor, 'email_unlocked', null, {
    email: request.email,
  });
  return { lockedUntil };
}
