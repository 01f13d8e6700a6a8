import { createHash } from 'node:crypto';
import { clientGroup } from './client-group.js';
import type { ThrottleLimit, ThrottleStore } from './throttle-store.js';

export interface ThrottleSettings {
  emailMaxFailures: number;
  ipMaxFailures: number;
  windowSeconds: number;
  lockSeconds: number;
}

export type Admission =
  | { admitted: true; keys: { email: string; ip: string } }
  | { admitted: false; retryAfterSeconds: number };

// Counters are keyed by a digest: the table never holds the addresses people typed.
function keyFor(kind: 'email' | 'ip', value: string): string {
  return `${kind}:${createHash('sha256').update(value).digest('base64url')}`;
}

/**
 * Brute-force throttling per normalised email (whether or not the account exists) and per
 * client address. Each attempt is charged before the password is checked, so concurrent
 * guesses cannot overrun the limit; a success takes its charge back.
 */
export function createThrottle(store: ThrottleStore, settings: ThrottleSettings) {
  const windowMs = settings.windowSeconds * 1000;
  const lockMs = settings.lockSeconds * 1000;
  const emailLimit: ThrottleLimit = { maxFailures: settings.emailMaxFailures, windowMs, lockMs };
  const ipLimit: ThrottleLimit = { maxFailures: settings.ipMaxFailures, windowMs, lockMs };

  return {
    async admit(email: string, ip: string, now: number): Promise<Admission> {
      const keys = { email: keyFor('email', email), ip: keyFor('ip', clientGroup(ip)) };
      const retryAfter = (until: number) => Math.max(1, Math.ceil((until - now) / 1000));
      const byIp = await store.charge(keys.ip, ipLimit, now);
      // A throttled address does not get to run up anyone's account counter either.
      if (byIp.failures > ipLimit.maxFailures) {
        return { admitted: false, retryAfterSeconds: retryAfter(byIp.lockedUntil) };
      }
      const byEmail = await store.charge(keys.email, emailLimit, now);
      if (byEmail.failures > emailLimit.maxFailures) {
        return { admitted: false, retryAfterSeconds: retryAfter(byEmail.lockedUntil) };
      }
      return { admitted: true, keys };
    },

    /** A correct password: the account's count starts over and the address gets its charge back. */
    async succeeded(keys: { email: string; ip: string }): Promise<void> {
      await store.clear(keys.email);
      await store.refund(keys.ip, ipLimit);
    },

    /** The password was never checked (load shed, database error): the attempt does not count. */
    async notChecked(keys: { email: string; ip: string }): Promise<void> {
      await store.refund(keys.email, emailLimit);
      await store.refund(keys.ip, ipLimit);
    },

    /** An admin lifted the lock (users unlock, set-password, enable): the count starts over. */
    async unlockEmail(email: string): Promise<void> {
      await store.clear(keyFor('email', email));
    },

    prune: (now: number) => store.prune(now, Math.max(windowMs, lockMs)),
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
