import os from 'node:os';
import * as z from 'zod/mini';
import { integer } from './read/kinds.js';
import { noted } from './read/notes.js';

/** Firebase's project-wide scrypt parameters, keys in base64 (src/users/legacy-hashes.cjs). */
export interface FirebaseScryptParams {
  signerKey: string;
  saltSeparator: string;
  rounds: number;
  memCost: number;
}

const firebaseExample =
  'base64_signer_key=jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==,base64_salt_separator=Bw==,rounds=8,mem_cost=14';

/**
 * `IMPORT_FIREBASE_SCRYPT`: a Firebase project's password hash parameters, as its console
 * shows them, for users imported with `$firebase-scrypt$` hashes; null when unset.
 */
function firebaseScrypt(raw: string | undefined): FirebaseScryptParams | null | 'invalid' {
  if (raw === undefined || raw.trim() === '') return null;
  const fields = new Map<string, string>();
  for (const part of raw.split(',')) {
    const at = part.indexOf('=');
    fields.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  const signerKey = fields.get('base64_signer_key') ?? '';
  const saltSeparator = fields.get('base64_salt_separator') ?? '';
  const rounds = Number(fields.get('rounds'));
  const memCost = Number(fields.get('mem_cost'));
  const base64 = /^[A-Za-z0-9+/]+={0,2}$/;
  const valid =
    fields.size === 4 &&
    base64.test(signerKey) &&
    base64.test(saltSeparator) &&
    Number.isInteger(rounds) &&
    rounds >= 1 &&
    rounds <= 16 &&
    Number.isInteger(memCost) &&
    memCost >= 1 &&
    memCost <= 16 &&
    128 * 2 ** memCost * rounds <= 64 * 1024 * 1024;
  return valid ? { signerKey, saltSeparator, rounds, memCost } : 'invalid';
}

/**
 * The hashing threads' nice increment: a middle way, measured with
 * `npm run bench:hash-priority` (docs/performance.md). Higher keeps probes quicker during a
 * burst of sign-ins and makes sign-ins slower while reads saturate the core.
 */
export const defaultHashNice = 10;

/** The argon2 threads: how many, how far below the event loop, and how many may wait. */
export const hashing = z.pipe(
  z
    .object({
      // At most 4 by default: each hashing thread holds 19 MiB while it hashes, and a container's
      // CPU count is often the host's. Raise it explicitly where the cores and memory are there.
      HASH_CONCURRENCY: noted(
        integer(1, 256, Math.min(4, Math.max(1, os.availableParallelism()))),
        {
          default: 'CPU count, at most 4',
          example: '4',
        },
      ),
      HASH_NICE: integer(0, 19, defaultHashNice),
      HASH_QUEUE_MAX: integer(0, 100_000, 64),
      IMPORT_FIREBASE_SCRYPT: noted(z.optional(z.string()), { example: firebaseExample }),
    })
    .check(
      z.superRefine((e, ctx) => {
        if (firebaseScrypt(e.IMPORT_FIREBASE_SCRYPT) !== 'invalid') return;
        ctx.addIssue({
          code: 'custom',
          path: ['IMPORT_FIREBASE_SCRYPT'],
          message: `must be the four hash parameters the Firebase console shows (rounds 1-16, mem_cost 1-16, at most 64 MiB), e.g. IMPORT_FIREBASE_SCRYPT=${firebaseExample}`,
        });
      }),
    ),
  z.transform((e) => ({
    hashConcurrency: e.HASH_CONCURRENCY,
    /** Sign-ins waiting for a hashing thread before 503 + `Retry-After`. */
    hashQueueMax: e.HASH_QUEUE_MAX,
    /** How much lower than the event loop the hashing threads run (Linux nice increment). */
    hashNice: e.HASH_NICE,
    /** Firebase's scrypt parameters, for imported `$firebase-scrypt$` hashes (null: none). */
    firebaseScrypt: firebaseScrypt(e.IMPORT_FIREBASE_SCRYPT) as FirebaseScryptParams | null,
  })),
);
