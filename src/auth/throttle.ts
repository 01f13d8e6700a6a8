import { createHash } from 'node:crypto';
import type { ThrottleScope } from '../observe/observer.js';
import { clientGroup } from '../traffic/client-group.js';
import type { Charge, ThrottleLimit, ThrottleStore } from './throttle-store.js';

export interface ThrottleSettings {
  emailMaxFailures: number;
  ipMaxFailures: number;
  /** Every attempt, successes too, per window: one client signing in in a loop is bounded. */
  emailMaxAttempts?: number;
  ipMaxAttempts?: number;
  windowSeconds: number;
  lockSeconds: number;
}

export const defaultEmailMaxAttempts = 50;
export const defaultIpMaxAttempts = 300;

interface ThrottleKeys {
  email: string;
  ip: string;
  emailAttempts: string;
  ipAttempts: string;
}

export type Admission =
  { admitted: true; keys: ThrottleKeys } | { admitted: false; retryAfterSeconds: number };

// Counters are keyed by a digest: the table never holds the addresses people typed.
function keyFor(kind: 'email' | 'ip' | 'email-attempts' | 'ip-attempts', value: string): string {
  return `${kind}:${createHash('sha256').update(value).digest('base64url')}`;
}

/**
 * Brute-force throttling per normalised email (whether or not the account exists) and per
 * client address. Each attempt is charged before the password is checked, so concurrent
 * guesses cannot overrun the limit; a success takes its charge back.
 */
export function createThrottle(
  store: ThrottleStore,
  settings: ThrottleSettings,
  onLock: (scope: ThrottleScope) => void = () => undefined,
) {
  const windowMs = settings.windowSeconds * 1000;
  const lockMs = settings.lockSeconds * 1000;
  const emailLimit: ThrottleLimit = { maxFailures: settings.emailMaxFailures, windowMs, lockMs };
  const ipLimit: ThrottleLimit = { maxFailures: settings.ipMaxFailures, windowMs, lockMs };
  // Attempt limits hold until their window ends: they bound a rate, they punish nothing.
  const emailAttemptLimit: ThrottleLimit = {
    maxFailures: settings.emailMaxAttempts ?? defaultEmailMaxAttempts,
    windowMs,
    lockMs: windowMs,
  };
  const ipAttemptLimit: ThrottleLimit = {
    maxFailures: settings.ipMaxAttempts ?? defaultIpMaxAttempts,
    windowMs,
    lockMs: windowMs,
  };

  // A lock is counted when it first refuses an attempt: the charge that reaches the limit is
  // still let in, and a right password then lifts an email's lock before it refused anyone.
  const charge = async (key: string, limit: ThrottleLimit, scope: ThrottleScope, now: number) => {
    const result: Charge = await store.charge(key, limit, now);
    if (result.failures === limit.maxFailures + 1) onLock(scope);
    return result;
  };

  return {
    async admit(email: string, ip: string, now: number): Promise<Admission> {
      const group = clientGroup(ip);
      const keys: ThrottleKeys = {
        email: keyFor('email', email),
        ip: keyFor('ip', group),
        emailAttempts: keyFor('email-attempts', email),
        ipAttempts: keyFor('ip-attempts', group),
      };
      const retryAfter = (until: number) => Math.max(1, Math.ceil((until - now) / 1000));
      // Every attempt first, then failures: a refused attempt is charged nowhere else.
      const byIpAttempts = await charge(keys.ipAttempts, ipAttemptLimit, 'ip_attempts', now);
      if (byIpAttempts.failures > ipAttemptLimit.maxFailures) {
        return { admitted: false, retryAfterSeconds: retryAfter(byIpAttempts.lockedUntil) };
      }
      const byEmailAttempts = await charge(
        keys.emailAttempts,
        emailAttemptLimit,
        'email_attempts',
        now,
      );
      if (byEmailAttempts.failures > emailAttemptLimit.maxFailures) {
        return { admitted: false, retryAfterSeconds: retryAfter(byEmailAttempts.lockedUntil) };
      }
      const byIp = await charge(keys.ip, ipLimit, 'ip', now);
      // A throttled address does not get to run up anyone's account counter either.
      if (byIp.failures > ipLimit.maxFailures) {
        return { admitted: false, retryAfterSeconds: retryAfter(byIp.lockedUntil) };
      }
      const byEmail = await charge(keys.email, emailLimit, 'email', now);
      if (byEmail.failures > emailLimit.maxFailures) {
        return { admitted: false, retryAfterSeconds: retryAfter(byEmail.lockedUntil) };
      }
      return { admitted: true, keys };
    },

    /**
     * A correct password: the account's failure count starts over and the address gets its
     * failure charge back; the attempt still counts against the attempt limits.
     */
    async succeeded(keys: ThrottleKeys): Promise<void> {
      await store.clear(keys.email);
      await store.refund(keys.ip, ipLimit);
    },

    /** The password was never checked (load shed, database error): the attempt does not count. */
    async notChecked(keys: ThrottleKeys): Promise<void> {
      await store.refund(keys.email, emailLimit);
      await store.refund(keys.ip, ipLimit);
      await store.refund(keys.emailAttempts, emailAttemptLimit);
      await store.refund(keys.ipAttempts, ipAttemptLimit);
    },

    /** An admin lifted the lock (users unlock, set-password, enable): the count starts over. */
    async unlockEmail(email: string): Promise<void> {
      await store.clear(keyFor('email', email));
      await store.clear(keyFor('email-attempts', email));
    },

    prune: (now: number) => store.prune(now, Math.max(windowMs, lockMs)),
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
