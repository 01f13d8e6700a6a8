import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Argon2 from '@node-rs/argon2';
import type { Piscina } from 'piscina';
import type { FirebaseScryptParams } from './legacy-hashes.cjs';

const require = createRequire(import.meta.url);
// Beside this module in src/ (the tests), beside the bundle in dist/ (scripts/build/bundle.ts).
const workerFile = new URL('./argon2-worker.cjs', import.meta.url);
/** A pool left idle this long lets its threads go; the next hash starts them again. */
const idleThreadMs = 60_000;

export type Argon2Task =
  | { op: 'hash'; password: string; params: Argon2.Options }
  | { op: 'verify'; hash: string; password: string; firebase: FirebaseScryptParams | null };

export interface Argon2Pool {
  run<T>(task: Argon2Task): Promise<T>;
  /** Ends the threads; a later `run` starts a new pool. */
  close(): Promise<void>;
}

/**
 * Worker threads for argon2 (piscina), at most `size` of them, each lowered by `nice` on Linux.
 * Elsewhere `nice()` would lower the whole process, event loop included, so it is not applied.
 * The pool starts with the first task: start-up and idle memory do not pay for it.
 */
export function createArgon2Pool(size: number, nice: number): Argon2Pool {
  // Checked at start-up, not at the first sign-in: a build without the script fails at once.
  if (!fs.existsSync(workerFile)) {
    throw new Error(`the password hashing script is missing: ${fileURLToPath(workerFile)}`);
  }
  let pool: Piscina | undefined;
  const failures = new WeakMap<Piscina, unknown>();
  const start = (): Piscina => {
    const started = new (require('piscina') as { Piscina: typeof Piscina }).Piscina({
      filename: workerFile.href,
      minThreads: 0,
      maxThreads: size,
      idleTimeout: idleThreadMs,
      niceIncrement: process.platform === 'linux' ? nice : 0,
      recordTiming: false,
    });
    // A thread that fails outside a task (its script cannot load) leaves the queued tasks
    // waiting for ever, and the event, unheard, would end the process: the pool is dropped,
    // its tasks fail with that error, and the next task starts a new pool.
    started.on('error', (error: unknown) => {
      failures.set(started, error);
      if (pool === started) pool = undefined;
      void started.destroy();
    });
    return started;
  };
  return {
    async run<T>(task: Argon2Task): Promise<T> {
      const current = (pool ??= start());
      try {
        return (await current.run(task)) as T;
      } catch (error) {
        throw failures.get(current) ?? error;
      }
    },
    async close() {
      const current = pool;
      pool = undefined;
      await current?.destroy();
    },
  };
}
