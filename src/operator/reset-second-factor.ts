import { lockFactors, voidChallenges } from '../account/model/factor-lock.js';
import { clearFactorFailures } from '../account/model/factor-throttle-store.js';
import { registeredUpkeep } from '../account/upkeep-registry.js';
import type { User } from '../users/store.js';
import { readUser } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

/**
 * The way out for someone who lost their authenticator app and their recovery codes: each
 * registered way in removes what a reset removes of it (TOTP off, its pending set-up and recovery
 * codes gone, recorded as `totp_disabled`), each removal recorded with the operator as actor. A
 * way in that is reset only when named joins when `methods` names it: `passkeys` for someone who
 * lost their passkeys (with SECOND_FACTOR=required an account whose one factor was a passkey has
 * no other way in), every passkey removed, each recorded as `passkey_removed`. Any sign-in
 * challenge in flight is void. Sessions stay; the next sign-in takes the password alone (or, with
 * SECOND_FACTOR=required, leads to enrolment). Each factor removed sends its
 * `second_factor.removed` webhook (the stores' writes). `changed: false` when there was nothing
 * to remove. 'missing' when no such user exists.
 */
export function resetSecondFactor(
  ports: OperatorPorts,
  request: { userId: string; actor: Actor; methods?: readonly string[] },
): Promise<{ user: User; changed: boolean } | 'missing'> {
  const named = new Set(request.methods ?? []);
  return ports.db.transaction().execute(async (trx) => {
    const user = await readUser(trx, request.userId);
    if (user === null) return 'missing';
    await lockFactors(trx, user.id);
    const now = ports.now();
    // The person starts over with a factor of their own: no lock from earlier guesses stays.
    await clearFactorFailures(trx, user.id);
    let changed = false;
    for (const { id, reset } of registeredUpkeep) {
      if (reset === undefined || (reset.onlyWhenNamed && !named.has(id))) continue;
      for (const removed of await reset.remove(trx, user.id, now)) {
        await recordOperatorEvent(trx, request.actor, user.id, removed.type, {
          reason: 'reset_second_factor',
          ...removed.detail,
        });
        changed = true;
      }
    }
    if (changed) await voidChallenges(trx, user.id, now);
    return { user, changed };
  });
}
