import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Argon2 from '@node-rs/argon2';
import { createArgon2Pool } from './argon2-pool.js';
import { readHash, type FirebaseScryptParams } from './legacy-hashes.cjs';
import { createTimingFloor } from './timing-floor.js';
import { WorkGate, type GateLoad } from '../traffic/work-gate.js';

// The native module loads on the first check of a stored hash's parameters.
const require = createRequire(import.meta.url);
let argon2: typeof Argon2 | undefined;
const native = (): typeof Argon2 => (argon2 ??= require('@node-rs/argon2') as typeof Argon2);

// OWASP Password Storage Cheat Sheet, argon2id: m=19 MiB, t=2, p=1.
const argon2idAlgorithm = 2; // Algorithm.Argon2id; a const enum, which verbatimModuleSyntax cannot import
const params = { algorithm: argon2idAlgorithm, memoryCost: 19456, timeCost: 2, parallelism: 1 };

/**
 * Verified in place of a real hash when the email is unknown, so that path costs one argon2
 * verification too. A constant (the hash of 32 random bytes, thrown away) rather than one made
 * at start-up: the same cost per verify, without 19 MiB and a hash on every boot. Matching it
 * would sign no one in: there is no user behind it.
 */
export const unknownUserPasswordHash =
  '$argon2id$v=19$m=19456,t=2,p=1$Ilm+bhFKnFqHV6U6njNkWA$NKezi7OFEPBUxsJ3hI4OEklAQL0w09ts5sgTaXczWPg';

/**
 * The password hash of an account made by an identity provider's sign-in, which has no password
 * until its owner sets one (the reset flow): no hash reads as it, so no password matches it.
 */
export const noPasswordHash = '!none';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password and for a hash that cannot be read: never throws for input. */
  verify(passwordHash: string, password: string): Promise<boolean>;
  /**
   * Times one verification of `passwordHash` (with a password nobody has) for the timing floor,
   * as a sign-in against it would be: the service learns the store's old kinds at start-up.
   */
  learn(passwordHash: string): Promise<void>;
  /** True when the hash was made with weaker or other parameters than today's. */
  needsRehash(passwordHash: string): boolean;
  /** Hashes and verifications it runs at once, and how many more may wait; past that it refuses. */
  readonly limits: { readonly concurrency: number; readonly queueMax: number };
  /** How many run and wait right now (metrics read it when scraped). */
  readonly load: GateLoad;
  /** Ends the hashing threads (at shutdown); a later hash starts them again. */
  close(): Promise<void>;
}

export interface HasherOptions {
  concurrency: number;
  queueMax: number;
  /**
   * How much lower than the event loop the hashing threads run (`HASH_NICE`). argon2 keeps a
   * core busy for tens of milliseconds per sign-in; at equal priority, a burst of sign-ins on
   * one core took the CPU from the thread answering probes and session reads.
   */
  nice: number;
  /** Firebase's scrypt parameters (`IMPORT_FIREBASE_SCRYPT`), for hashes imported from it. */
  firebase?: FirebaseScryptParams | undefined;
}

/**
 * argon2id on worker threads of lower priority (argon2-pool.ts), behind a bounded gate (a
 * flood gets GateFullError); the gate's concurrency is the pool's size. Hashes imported from
 * other services (legacy-hashes.cjs) are verified there too, and every verification lasts at
 * least as long as the slowest kind seen (timing-floor.ts), so an imported user's old hash does
 * not tell a stranger the address is there.
 */
export function createArgon2Hasher(options: HasherOptions): PasswordHasher {
  const gate = new WorkGate(options.concurrency, options.queueMax);
  const pool = createArgon2Pool(options.concurrency, options.nice);
  const floor = createTimingFloor();
  const firebase = options.firebase ?? null;
  const timed = (hash: string, password: string) =>
    gate.run(() =>
      pool.run<{ matched: boolean; ms: number }>({ op: 'verify', hash, password, firebase }),
    );
  const kindOf = (hash: string) => {
    const reading = readHash(hash, firebase);
    return reading.ok ? reading.cost : 'unreadable';
  };
  return {
    limits: { concurrency: options.concurrency, queueMax: options.queueMax },
    load: gate,
    close: () => pool.close(),
    hash: (password) => gate.run(() => pool.run<string>({ op: 'hash', password, params })),
    async verify(passwordHash, password) {
      const { matched, ms } = await timed(passwordHash, password);
      await floor.pad(kindOf(passwordHash), ms);
      return matched;
    },
    async learn(passwordHash) {
      const { ms } = await timed(passwordHash, randomBytes(16).toString('base64url'));
      floor.note(kindOf(passwordHash), ms);
    },
    needsRehash(passwordHash) {
      try {
        const current = native().parseOptions(passwordHash);
        return (
          current.algorithm !== params.algorithm ||
          current.memoryCost < params.memoryCost ||
          current.timeCost < params.timeCost ||
          current.parallelism < params.parallelism
        );
      } catch {
        // Unreadable hashes are replaced on the next successful sign-in.
        return true;
      }
    },
  };
}
