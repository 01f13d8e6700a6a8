// Sign-in throughput: full browser-like sign-ins (CSRF, then the credentials POST), one at a
// time and 16 at once. The hash-only figure (hash-only.ts) uses the same counts.
import { now, pool } from './common.ts';
import { signIn } from './http.ts';

export const signInSequential = 40;
export const signInConcurrentTotal = 160;
export const signInConcurrency = 16;

/** Sign-ins (or bare hashes) per second, one at a time and `signInConcurrency` at once. */
export interface Rates {
  sequential: number;
  concurrent: number;
}

export async function signInRates(base: string): Promise<Rates> {
  let t0 = now();
  for (let i = 0; i < signInSequential; i += 1) await signIn(base);
  const sequential = signInSequential / ((now() - t0) / 1000);
  t0 = now();
  await pool(signInConcurrentTotal, signInConcurrency, () => signIn(base));
  const concurrent = signInConcurrentTotal / ((now() - t0) / 1000);
  return { sequential, concurrent };
}
