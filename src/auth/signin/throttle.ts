import { createHash } from 'node:crypto';
import type { ThrottleScope } from '../../observe/observer.js';
import { clientGroup } from '../../traffic/client-group.js';
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
  /** The email from this address: one address guessing locks only itself out of the account. */
  emailIp: string;
  emailAttempts: string;
  ipAttempts: string;
}

/** The client address's counters: what an address-only charge names. */
export type AddressKeys = Pick<ThrottleKeys, 'ip' | 'ipAttempts'>;

export type AddressAdmission =
  { admitted: true; keys: AddressKeys } | { admitted: false; retryAfterSeconds: number };

export type Admission =
  | { admitted: true; keys: ThrottleKeys; pastEmailLock: boolean }
  | { admitted: false; retryAfterSeconds: number };

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

// Counters are keyed by a digest: the table never holds the addresses people typed.
function keyFor(kind: 'email' | 'ip' | 'email-attempts' | 'ip-attempts', value: string): string {
  return `${kind}:${digest(value)}`;
}

// The email's digest leads, so an admin's unlock finds every address's counter for it.
const emailIpPrefix = (email: string) => `email-ip:${digest(email)}:`;
const emailIpKey = (email: string, group: string) => `${emailIpPrefix(email)}${digest(group)}`;

/** The five counters' limits, from the settings. */
function limitsOf(settings: ThrottleSettings) {
  const windowMs = settings.windowSeconds * 1000;
  const lockMs = settings.lockSeconds * 1000;
  const emailLimit: ThrottleLimit = { maxFailures: settings.emailMaxFailures, windowMs, lockMs };
  return {
    windowMs,
    lockMs,
    email: emailLimit,
    ip: { maxFailures: settings.ipMaxFailures, windowMs, lockMs } satisfies ThrottleLimit,
    // The email's own limit, from one address: its owner elsewhere is not locked by it.
    emailIp: emailLimit,
    // Attempt limits hold until their window ends: they bound a rate, they punish nothing.
    emailAttempts: {
      maxFailures: settings.emailMaxAttempts ?? defaultEmailMaxAttempts,
      windowMs,
      lockMs: windowMs,
    } satisfies ThrottleLimit,
    ipAttempts: {
      maxFailures: settings.ipMaxAttempts ?? defaultIpMaxAttempts,
      windowMs,
      lockMs: windowMs,
    } satisfies ThrottleLimit,
  };
}

type Limits = ReturnType<typeof limitsOf>;

interface Counters {
  store: ThrottleStore;
  limits: Limits;
  onLock: (scope: ThrottleScope) => void;
}

const retryAfter = (until: number, now: number) => Math.max(1, Math.ceil((until - now) / 1000));

// A lock is counted when it first refuses an attempt: the charge that reaches the limit is
// still let in, and a right password then lifts an email's lock before it refused anyone.
// The (email, address) lock has no metric of its own yet: it is not reported.
async function charge(
  counters: Counters,
  key: string,
  limit: ThrottleLimit,
  scope: ThrottleScope | null,
  now: number,
): Promise<Charge> {
  const result = await counters.store.charge(key, limit, now);
  if (result.failures === limit.maxFailures + 1 && scope !== null) counters.onLock(scope);
  return result;
}

// Every attempt first, then failures: a refused attempt is charged nowhere else, and a
// throttled address does not get to run up anyone's account counter either. Without an email
// (none could be read), the address alone is charged. A known device goes on past a
// per-email limit (still charged to it); `pastEmailLock` says it passed the failure lock.
// The email before the (email, address): a lock from one address still counts as the
// email's lock in the metrics.
async function chargeInTurn(
  counters: Counters,
  keys: Partial<ThrottleKeys> & Pick<ThrottleKeys, 'ip' | 'ipAttempts'>,
  knownDevice: boolean,
  now: number,
): Promise<{ retryAfterSeconds: number | null; pastEmailLock: boolean }> {
  const { limits } = counters;
  const charges: [string | undefined, ThrottleLimit, ThrottleScope | null, boolean][] = [
    [keys.ipAttempts, limits.ipAttempts, 'ip_attempts', false],
    [keys.emailAttempts, limits.emailAttempts, 'email_attempts', knownDevice],
    [keys.ip, limits.ip, 'ip', false],
    [keys.email, limits.email, 'email', knownDevice],
    [keys.emailIp, limits.emailIp, null, false],
  ];
  let pastEmailLock = false;
  for (const [key, limit, scope, passes] of charges) {
    if (key === undefined) continue;
    const result = await charge(counters, key, limit, scope, now);
    if (result.failures <= limit.maxFailures) continue;
    if (!passes) return { retryAfterSeconds: retryAfter(result.lockedUntil, now), pastEmailLock };
    if (scope === 'email') pastEmailLock = true;
  }
  return { retryAfterSeconds: null, pastEmailLock };
}

const addressKeys = (ip: string): AddressKeys => {
  const group = clientGroup(ip);
  return { ip: keyFor('ip', group), ipAttempts: keyFor('ip-attempts', group) };
};
const emailKeys = (email: string, ip: string) => ({
  email: keyFor('email', email),
  emailAttempts: keyFor('email-attempts', email),
  emailIp: emailIpKey(email, clientGroup(ip)),
});

/** The throttle's charges to the client address alone, for secrets that are no password. */
function addressCharges(counters: Counters) {
  return {
    /**
     * Charges an attempt at a secret that is no password (a second factor's code) to the client
     * address alone: its attempt and failure limits, never spared for a known device. The
     * account's own bound on such guesses is the second factor's (src/account/model/
     * factor-throttle.ts), so they neither lock nor clear the password's per-email counters.
     */
    async admitAddress(ip: string, now: number): Promise<AddressAdmission> {
      const keys = addressKeys(ip);
      const { retryAfterSeconds } = await chargeInTurn(counters, keys, false, now);
      return retryAfterSeconds === null
        ? { admitted: true, keys }
        : { admitted: false, retryAfterSeconds };
    },

    /** A right secret on an address-only charge: the address gets its failure charge back. */
    addressSucceeded: (keys: AddressKeys): Promise<void> =>
      counters.store.refund(keys.ip, counters.limits.ip),

    /** An address-only charge whose secret was never checked: taken back whole. */
    async addressNotChecked(keys: AddressKeys): Promise<void> {
      await counters.store.refund(keys.ip, counters.limits.ip);
      await counters.store.refund(keys.ipAttempts, counters.limits.ipAttempts);
    },
  };
}

/**
 * Brute-force throttling per normalised email (whether or not the account exists), per client
 * address, and per (email, address). Each attempt is charged before the password is checked, so
 * concurrent guesses cannot overrun the limit; a success takes its charge back. A device that
 * signed in to the account before (`knownDevice`) is still charged everywhere but not refused
 * by the per-email limits: guesses from elsewhere cannot lock its owner out.
 */
export function createThrottle(
  store: ThrottleStore,
  settings: ThrottleSettings,
  onLock: (scope: ThrottleScope) => void = () => undefined,
) {
  const limits = limitsOf(settings);
  const counters: Counters = { store, limits, onLock };
  const { windowMs, lockMs } = limits;
  const ipLimit = limits.ip;

  return {
    /** The limits it was made with: other counters of guesses (a second factor's) follow them. */
    settings,

    /**
     * Charges an attempt before its password check. `knownDevice`: the client proved it signed
     * in to this email before (src/auth/cookies/device-cookie.ts), so the per-email limits do not refuse
     * it. `pastEmailLock` on an admitted attempt: the email's failure lock was in force.
     */
    async admit(email: string, ip: string, now: number, knownDevice = false): Promise<Admission> {
      const keys: ThrottleKeys = { ...addressKeys(ip), ...emailKeys(email, ip) };
      const { retryAfterSeconds, pastEmailLock } = await chargeInTurn(
        counters,
        keys,
        knownDevice,
        now,
      );
      return retryAfterSeconds === null
        ? { admitted: true, keys, pastEmailLock }
        : { admitted: false, retryAfterSeconds };
    },

    /**
     * An attempt refused before its password check (malformed, over-long): charged as a wrong
     * password, to the address and to the email when one could be read, and never taken back, so
     * a client sending only refusals is throttled as one guessing is. Returns the Retry-After
     * seconds when a limit is reached, else null.
     */
    async refused(
      email: string | null,
      ip: string,
      now: number,
      knownDevice = false,
    ): Promise<number | null> {
      const keys = { ...addressKeys(ip), ...(email !== null && emailKeys(email, ip)) };
      return (await chargeInTurn(counters, keys, knownDevice, now)).retryAfterSeconds;
    },

    /**
     * A correct password: the account's failure count starts over and the address gets its
     * failure charges back; the attempt still counts against the attempt limits. A known device
     * that passed a per-email lock leaves it in place: the guesses from elsewhere go on counting.
     */
    async succeeded(keys: ThrottleKeys, pastEmailLock = false): Promise<void> {
      if (!pastEmailLock) await store.clear(keys.email);
      await store.clear(keys.emailIp);
      await store.refund(keys.ip, ipLimit);
    },

    /** The password was never checked (load shed, database error): the attempt does not count. */
    async notChecked(keys: ThrottleKeys): Promise<void> {
      await store.refund(keys.email, limits.email);
      await store.refund(keys.emailIp, limits.emailIp);
      await store.refund(keys.ip, ipLimit);
      await store.refund(keys.emailAttempts, limits.emailAttempts);
      await store.refund(keys.ipAttempts, limits.ipAttempts);
    },

    ...addressCharges(counters),

    /** When the sign-in lock on an email ends (any of its counters), or null when none holds. */
    emailLockedUntil: (email: string, now: number): Promise<number | null> =>
      store.lockedUntil(
        [keyFor('email', email), keyFor('email-attempts', email)],
        emailIpPrefix(email),
        now,
      ),

    /** An admin lifted the lock (users unlock, set-password, enable): the count starts over. */
    async unlockEmail(email: string): Promise<void> {
      await store.clear(keyFor('email', email));
      await store.clear(keyFor('email-attempts', email));
      await store.clearPrefix(emailIpPrefix(email));
    },

    prune: (now: number) => store.prune(now, Math.max(windowMs, lockMs)),
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
