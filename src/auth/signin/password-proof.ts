import {
  noPasswordHash,
  unknownUserPasswordHash,
  type PasswordHasher,
} from '../../users/hasher.js';
import type { Admission, Throttle } from './throttle.js';

/*
 * The one password proof: sign-in (src/auth/signin/authorize.ts) and every account route that asks for
 * a password (src/account/model/proven-password.ts) check a password through it, so the throttle
 * protocol, the argon2 verification and what a success takes back are written once.
 */

export type Admitted = Extract<Admission, { admitted: true }>;

/** Who the attempt is charged to. */
export interface ProofScope {
  /** The normalised address typed (or the holder's). */
  email: string;
  ip: string;
  /** A client that proved an earlier sign-in: the per-address limits do not refuse it. */
  knownDevice: boolean;
  /** An admission the request already made (a code guess), used rather than charging again. */
  admitted?: Admitted | undefined;
}

/** What a password is checked against. */
export interface PasswordHolder {
  passwordHash: string;
}

export type Proof<Holder> =
  /** Refused before anything was checked: a limit is reached. */
  | { outcome: 'throttled'; retryAfterSeconds: number }
  /** Wrong, or no holder, or one that may not use it (`usable`): the charge stays. */
  | { outcome: 'wrong'; holder: Holder | null; matched: boolean }
  | { outcome: 'right'; holder: Holder };

/** What an attempt needs: the throttle and a clock (and a wrapper for store calls). */
export interface AttemptPorts {
  throttle: Throttle;
  now: () => number;
  /** Wraps each store call (sign-in marks a store failure as its 503 this way). */
  store?: <T>(work: () => Promise<T>) => Promise<T>;
  log?: { error(fields: object, message: string): void };
}

export interface ProofPorts extends AttemptPorts {
  hasher: PasswordHasher;
}

/** What a check of a secret found: right (with its value), or wrong (with what it saw). */
export type Checked<Right, Wrong = undefined> =
  { right: true; value: Right } | { right: false; seen: Wrong };

/** Refused before anything was checked: a limit is reached. */
export interface Throttled {
  throttled: true;
  retryAfterSeconds: number;
}

/**
 * One attempt at a secret, through the throttle's protocol, written once: charged first (so
 * parallel guesses cannot overrun a limit; past one, nothing is checked), then `check`; a right
 * answer takes its failure charges back, a wrong one stays charged, and a check that throws was
 * never made, so its charge is refunded and the error goes on.
 */
export async function attempt<Right, Wrong>(
  ports: AttemptPorts,
  scope: ProofScope,
  check: (admitted: Admitted) => Promise<Checked<Right, Wrong>>,
): Promise<Throttled | Checked<Right, Wrong>> {
  const store = ports.store ?? ((work) => work());
  const admission =
    scope.admitted ??
    (await store(() =>
      ports.throttle.admit(scope.email, scope.ip, ports.now(), scope.knownDevice),
    ));
  if (!admission.admitted)
    return { throttled: true, retryAfterSeconds: admission.retryAfterSeconds };
  let checked: Checked<Right, Wrong>;
  try {
    checked = await check(admission);
  } catch (error) {
    // The refund is best effort: the error that stopped the check is the one to answer.
    await ports.throttle.notChecked(admission.keys).catch((refundError: unknown) => {
      ports.log?.error({ err: refundError }, 'could not take back a throttle charge');
    });
    throw error;
  }
  if (checked.right)
    await store(() => ports.throttle.succeeded(admission.keys, admission.pastEmailLock));
  return checked;
}

/**
 * Checks `password` against the holder `find` returns, as one attempt: nothing is looked up or
 * hashed past a limit; then exactly one argon2 verification, against a stand-in hash when there
 * is no holder, so the time says nothing of whether one exists; only a right password of a
 * `usable` holder counts as right.
 */
export async function provePassword<Holder extends PasswordHolder>(
  ports: ProofPorts,
  scope: ProofScope,
  password: string,
  find: () => Promise<Holder | null>,
  usable: (holder: Holder) => boolean = () => true,
): Promise<Proof<Holder>> {
  const store = ports.store ?? ((work) => work());
  const result = await attempt(ports, scope, async () => {
    const holder = await store(find);
    // An account without a password costs the same verification, and never matches.
    const hasPassword = holder !== null && holder.passwordHash !== noPasswordHash;
    const hash = hasPassword ? holder.passwordHash : unknownUserPasswordHash;
    const matched = (await ports.hasher.verify(hash, password)) && hasPassword;
    return holder !== null && matched && usable(holder)
      ? { right: true as const, value: holder }
      : { right: false as const, seen: { holder, matched } };
  });
  if ('throttled' in result)
    return { outcome: 'throttled', retryAfterSeconds: result.retryAfterSeconds };
  return result.right
    ? { outcome: 'right', holder: result.value }
    : { outcome: 'wrong', ...result.seen };
}
