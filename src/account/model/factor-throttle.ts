import type { Checked, Throttled } from '../../auth/signin/password-proof.js';
import type { Throttle } from '../../auth/signin/throttle.js';
import {
  clearFactorFailures,
  type FactorLockPolicy,
  type FactorThrottleStore,
} from './factor-throttle-store.js';

/*
 * The one bound on guesses at a second factor's secret (a TOTP code; a mailed sign-in code),
 * for someone who already has the password. Its count is the account's own: a right password
 * does not clear it and a device cookie does not spare it (the password's throttle, src/auth/
 * throttle.ts, would give them both), only a right second factor or an operator starts it over.
 * Every `maxFailures` wrong codes lock the factor step, each lock twice as long as the last, up
 * to a cap: so whoever has the password gets a few dozen guesses in the first day and
 * `maxFailures` a day after that, and the owner is told at every lock.
 */

/** The second factor's lock: 10 wrong codes, then 15 minutes, doubling to a day. */
export function factorLockPolicy(settings: {
  maxFailures: number;
  lockSeconds: number;
}): FactorLockPolicy {
  return {
    maxFailures: settings.maxFailures,
    firstLockMs: settings.lockSeconds * 1000,
    maxLockMs: Math.max(settings.lockSeconds * 1000, factorMaxLockMs),
  };
}

/** The longest a second factor's lock lasts. */
export const factorMaxLockMs = 24 * 60 * 60 * 1000;

export interface FactorAttemptPorts {
  /** The client address's counters, charged for every guess as a password's are. */
  throttle: Pick<Throttle, 'admitAddress' | 'addressSucceeded' | 'addressNotChecked'>;
  store: FactorThrottleStore;
  policy: FactorLockPolicy;
  now: () => number;
  log: { error(fields: object, message: string): void };
}

export interface FactorScope {
  userId: string;
  ip: string;
  /**
   * A secret no guessing can find (a recovery code: 80 random bits) is checked through a lock,
   * so the owner keeps a way in while someone else's guesses hold the step locked; it is still
   * charged to the address. Its success starts the count over as any right second factor does.
   */
  throughLock?: boolean;
}

/** A wrong code whose charge locked the factor step, until when (ms). */
export type FactorChecked<Right> = Checked<Right> & { lockedUntil?: number };

const retryAfter = (until: number, now: number) => Math.max(1, Math.ceil((until - now) / 1000));

/**
 * One attempt at a second factor's secret: the address charged, then the account's factor
 * count (both before `check`, so parallel guesses cannot overrun either); past a limit nothing
 * is checked. A right answer takes back the address's failure and clears the account's count;
 * a wrong one stays charged; a check that throws was never made, so both are taken back.
 */
export async function factorAttempt<Right>(
  ports: FactorAttemptPorts,
  scope: FactorScope,
  check: () => Promise<Checked<Right>>,
): Promise<Throttled | FactorChecked<Right>> {
  const now = ports.now();
  const address = await ports.throttle.admitAddress(scope.ip, now);
  if (!address.admitted) return { throttled: true, retryAfterSeconds: address.retryAfterSeconds };
  const charge =
    scope.throughLock === true ? null : await ports.store.charge(scope.userId, ports.policy, now);
  if (charge !== null && !charge.admitted)
    return { throttled: true, retryAfterSeconds: retryAfter(charge.lockedUntil, now) };
  let checked: Checked<Right>;
  try {
    checked = await check();
  } catch (error) {
    // Best effort: the error that stopped the check is the one to answer.
    await Promise.all([
      ports.throttle.addressNotChecked(address.keys),
      charge === null ? undefined : ports.store.refund(scope.userId, charge),
    ]).catch((refundError: unknown) => {
      ports.log.error({ err: refundError }, 'could not take back a second-factor charge');
    });
    throw error;
  }
  if (checked.right) {
    await ports.throttle.addressSucceeded(address.keys);
    await ports.store.clear(scope.userId);
    return checked;
  }
  return charge?.setLock === true ? { ...checked, lockedUntil: charge.lockedUntil } : checked;
}

export { clearFactorFailures };
