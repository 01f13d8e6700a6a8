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

  const retryAfter = (until: number, now: number) => Math.max(1, Math.ceil((until - now) / 1000));

  // Every attempt first, then failures: a refused attempt is charged nowhere else, and a
  // throttled address does not get to run up anyone's account counter either. Without an email
  // (none could be read), the address alone is charged.
  const chargeInTurn = async (
    keys: Partial<ThrottleKeys> & Pick<ThrottleKeys, 'ip' | 'ipAttempts'>,
    now: number,
  ): Promise<number | null> => {
    const charges: [string | undefined, ThrottleLimit, ThrottleScope][] = [
      [keys.ipAttempts, ipAttemptLimit, 'ip_attempts'],
      [keys.emailAttempts, emailAttemptLimit, 'email_attempts'],
      [keys.ip, ipLimit, 'ip'],
      [keys.email, emailLimit, 'email'],
    ];
    for (const [key, limit, scope] of charges) {
      if (key === undefined) continue;
      const result = await charge(key, limit, scope, now);
      if (result.failures > limit.maxFailures) return retryAfter(result.lockedUntil, now);
    }
    return null;
  };

  const addressKeys = (ip: string) => {
    const group = clientGroup(ip);
    return { ip: keyFor('ip', group), ipAttempts: keyFor('ip-attempts', group) };
  };
  const emailKeys = (email: string) => ({
    email: keyFor('email', email),
    emailAttempts: keyFor('email-attempts', email),
  });

  return {
    async admit(email: string, ip: string, now: number): Promise<Admission> {
      const keys: ThrottleKeys = { ...addressKeys(ip), ...emailKeys(email) };
      const retryAfterSeconds = await chargeInTurn(keys, now);
      return retryAfterSeconds === null
        ? { admitted: true, keys }
        : { admitted: false, retryAfterSeconds };
    },

    /**
     * An attempt refused before its password check (malformed, over-long): charged as a wrong
     * password, to the address and to the email when one could be read, and never taken back, so
     * a client sending only refusals is throttled as one guessing is. Returns the Retry-After
     * seconds when a limit is reached, else null.
     */
    refused(email: string | null, ip: string, now: number): Promise<number | null> {
      return chargeInTurn({ ...addressKeys(ip), ...(email !== null && emailKeys(email)) }, now);
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
