import os from 'node:os';
import * as z from 'zod/mini';
import { integer } from './read/kinds.js';
import { noted } from './read/notes.js';

/**
 * The hashing threads' nice increment: a middle way, measured with
 * `npm run bench:hash-priority` (docs/performance.md). Higher keeps probes quicker during a
 * burst of sign-ins and makes sign-ins slower while reads saturate the core.
 */
export const defaultHashNice = 10;

/** The argon2 threads: how many, how far below the event loop, and how many may wait. */
export const hashing = z.pipe(
  z.object({
    // At most 4 by default: each hashing thread holds 19 MiB while it hashes, and a container's
    // CPU count is often the host's. Raise it explicitly where the cores and memory are there.
    HASH_CONCURRENCY: noted(integer(1, 256, Math.min(4, Math.max(1, os.availableParallelism()))), {
      default: 'CPU count, at most 4',
      example: '4',
    }),
    HASH_NICE: integer(0, 19, defaultHashNice),
    HASH_QUEUE_MAX: integer(0, 100_000, 64),
  }),
  z.transform((e) => ({
    hashConcurrency: e.HASH_CONCURRENCY,
    /** Sign-ins waiting for a hashing thread before 503 + `Retry-After`. */
    hashQueueMax: e.HASH_QUEUE_MAX,
    /** How much lower than the event loop the hashing threads run (Linux nice increment). */
    hashNice: e.HASH_NICE,
  })),
);
