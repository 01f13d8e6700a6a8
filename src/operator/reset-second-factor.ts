import { lockFactors, voidChallenges } from '../account/model/factor-lock.js';
import { clearFactorFailures } from '../account/model/factor-throttle-store.js';
import { createPasskeyStore } from '../account/passkeys/passkey-store.js';
import { removeTotp } from '../account/totp/totp-store.js';
import type { User } from '../users/store.js';
import { readUser } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

/**
 * The way out for someone who lost their authenticator app and their recovery codes: TOTP off,
 * its pending set-up and recovery codes gone, recorded as `totp_disabled` with the operator as
 * actor. With `passkeys`, also for someone who lost their passkeys (with SECOND_FACTOR=required
 * an account whose one factor was a passkey has no other way in): every passkey of the account
 * removed, each recorded as `passkey_removed` the same way. Any sign-in challenge in flight is
 * void. Sessions stay; the next sign-in takes the password alone (or, with SECOND_FACTOR=
 * required, leads to enrolment). Each factor removed sends its `second_factor.removed` webhook
 * (the stores' writes). `changed: false` when there was nothing to remove. 'missing' when no
 * such user exists.
 */
export function resetSecondFactor(
  ports: OperatorPorts,
  request: { userId: string; actor: Actor; passkeys?: boolean },
): Promise<{ user: User; changed: boolean } | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const user = await readUser(trx, request.userId);
    if (user === null) return 'missing';
    await lockFactors(trx, user.id);
    const now = ports.now();
    let changed = await removeTotp(trx, user.id, now);
    // The person starts over with a factor of their own: no lock from earlier guesses stays.
    await clearFactorFailures(trx, user.id);
    if (changed)
      await recordOperatorEvent(trx, request.actor, user.id, 'totp_disabled', {
        reason: 'reset_second_factor',
      });
    if (request.passkeys === true) {
      const removed = await createPasskeyStore(trx).removeAll(trx, user.id, now);
      for (const id of removed)
        await recordOperatorEvent(trx, request.actor, user.id, 'passkey_removed', {
          reason: 'reset_second_factor',
          passkey: id,
        });
      if (removed.length > 0) changed = true;
    }
    if (changed) await voidChallenges(trx, user.id, now);
    return { user, changed };
  });
}
