import { hash, parseOptions, verify } from '@node-rs/argon2';
import { WorkGate } from './work-gate.js';

// OWASP Password Storage Cheat Sheet, argon2id: m=19 MiB, t=2, p=1.
const argon2idAlgorithm = 2; // Algorithm.Argon2id; a const enum, which verbatimModuleSyntax cannot import
const params = { algorithm: argon2idAlgorithm, memoryCost: 19456, timeCost: 2, parallelism: 1 };

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password and for a hash that cannot be read: never throws for input. */
  verify(passwordHash: string, password: string): Promise<boolean>;
  /** True when the hash was made with weaker or other parameters than today's. */
  needsRehash(passwordHash: string): boolean;
}

export interface HasherOptions {
  concurrency: number;
  queueMax: number;
}

/** argon2id on libuv's thread pool, behind a bounded gate (a flood gets GateFullError). */
export function createArgon2Hasher(options: HasherOptions): PasswordHasher {
  const gate = new WorkGate(options.concurrency, options.queueMax);
  return {
    hash: (password) => gate.run(() => hash(password, params)),
    verify: (passwordHash, password) =>
      gate.run(async () => {
        try {
          return await verify(passwordHash, password);
        } catch {
          // A malformed stored hash verifies nothing; the caller treats it as a wrong password.
          return false;
        }
      }),
    needsRehash(passwordHash) {
      try {
        const current = parseOptions(passwordHash);
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
