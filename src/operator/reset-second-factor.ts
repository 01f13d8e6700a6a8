import { removeTotp } from '../account/totp/totp-store.js';
import type { User } from '../users/store.js';
import { readUser } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

/**
 * The way out for someone who lost their authenticator app and their recovery codes: TOTP off,
 * its pending set-up and recovery codes gone, recorded as `totp_disabled` with the operator as
 * actor. Sessions stay; the next sign-in takes the password alone (or, with SECOND_FACTOR=
 * required, leads to enrolment). `changed: false` when the user had no TOTP. 'missing' when no
 * such user exists.
 */
export function resetSecondFactor(
  ports: OperatorPorts,
  request: { userId: string; actor: Actor },
): Promise<{ user: User; changed: boolean } | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const user = await readUser(trx, request.userId);
    if (user === null) return 'missing';
    const changed = await removeTotp(trx, user.id, ports.now());
    if (changed)
      await recordOperatorEvent(trx, request.actor, user.id, 'totp_disabled', {
        reason: 'reset_second_factor',
      });
    return { user, changed };
  });
}
