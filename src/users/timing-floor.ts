import { setTimeout as sleep } from 'node:timers/promises';

/** Today's argon2id, the kind every verification is held to when no other kind was seen. */
const ownKind = 'argon2id:19456,2,1';
/** Weight of the newest measurement in a kind's running mean. */
const weight = 0.2;

/**
 * How long a password verification takes says which kind of hash the address has, and so that
 * it has one: an imported bcrypt hash at cost 10 takes about 40 ms here, today's argon2id and the
 * stand-in verified for an unknown address about 10. Each kind's running mean is kept (by its
 * parameters, `cost` from legacy-hashes.cjs), and while any kind other than today's has been
 * seen, each verification is padded, by waiting, not by work, to the slowest mean: every
 * address, known or not, answers in the same time. With only argon2id seen, nothing is padded.
 */
export function createTimingFloor() {
  const means = new Map<string, number>();
  let slowest = 0;
  const note = (kind: string, ms: number) => {
    const before = means.get(kind);
    means.set(kind, before === undefined ? ms : before + weight * (ms - before));
    slowest = Math.max(...means.values());
  };
  return {
    /** Records a verification of `kind` that took `ms`, without waiting (start-up's sample). */
    note,
    /** Records a verification of `kind` that took `ms`, then waits out the rest of the floor. */
    async pad(kind: string, ms: number): Promise<void> {
      note(kind, ms);
      if (means.size === 1 && means.has(ownKind)) return;
      const rest = slowest - ms;
      if (rest >= 1) await sleep(rest);
    },
  };
}
