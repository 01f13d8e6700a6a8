import { createRequire } from 'node:module';
import type * as Argon2 from '@node-rs/argon2';
import type { Piscina } from 'piscina';
import { WorkGate, type GateLoad } from './work-gate.js';

// The native module and the worker pool load on the first hash: start-up and idle memory do
// not pay for them.
const require = createRequire(import.meta.url);
let argon2: typeof Argon2 | undefined;
const native = (): typeof Argon2 => (argon2 ??= require('@node-rs/argon2') as typeof Argon2);

/**
 * How much lower than the event loop the hashing threads run (nice +19, Linux's lowest).
 * argon2 keeps a core busy for tens of milliseconds per sign-in; at equal priority, a burst of
 * sign-ins on a one-core container took the CPU from the thread answering health probes and
 * session reads (a probe's p99 was 300-480 ms here, and 20-70 ms with the hashing niced). The
 * hashes still get every cycle the event loop leaves.
 */
const hashNiceIncrement = 19;
/** A pool left idle this long lets its threads go; the next sign-in starts them again. */
const idleThreadMs = 60_000;
const workerFile = new URL('./argon2-worker.cjs', import.meta.url);

type Argon2Task =
  | { op: 'hash'; password: string; params: Argon2.Options }
  | { op: 'verify'; hash: string; password: string };

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

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password and for a hash that cannot be read: never throws for input. */
  verify(passwordHash: string, password: string): Promise<boolean>;
  /** True when the hash was made with weaker or other parameters than today's. */
  needsRehash(passwordHash: string): boolean;
  /** Hashes and verifications it runs at once, and how many more may wait; past that it refuses. */
  readonly limits: { readonly concurrency: number; readonly queueMax: number };
  /** How many run and wait right now (metrics read it when scraped). */
  readonly load: GateLoad;
}

export interface HasherOptions {
  concurrency: number;
  queueMax: number;
}

/**
 * argon2id on worker threads of lower priority (piscina, `niceIncrement`), behind a bounded
 * gate (a flood gets GateFullError); the gate's concurrency is the pool's size.
 */
export function createArgon2Hasher(options: HasherOptions): PasswordHasher {
  const gate = new WorkGate(options.concurrency, options.queueMax);
  let pool: Piscina | undefined;
  const run = <T>(task: Argon2Task): Promise<T> => {
    pool ??= new (require('piscina') as { Piscina: typeof Piscina }).Piscina({
      filename: workerFile.href,
      minThreads: 0,
      maxThreads: options.concurrency,
      idleTimeout: idleThreadMs,
      niceIncrement: hashNiceIncrement,
      recordTiming: false,
    });
    return pool.run(task) as Promise<T>;
  };
  return {
    limits: { concurrency: options.concurrency, queueMax: options.queueMax },
    load: gate,
    hash: (password) => gate.run(() => run<string>({ op: 'hash', password, params })),
    verify: (passwordHash, password) =>
      gate.run(() => run<boolean>({ op: 'verify', hash: passwordHash, password })),
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
