import { describe, expect, it } from 'vitest';
import { editDistance, editsWithin } from '../../src/util/edit-distance.js';

// The bounded edit distance the start-up's unknown-variable warnings use must say what the whole
// table says, up to its limit: checked against it on every pair of a seeded random sample.

/** A small deterministic generator (mulberry32): the same sample on every run. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('editsWithin', () => {
  it('is editDistance up to its limit, and limit + 1 beyond it, on 20,000 random pairs', () => {
    const next = random(41);
    // Three letters (one beyond ASCII) make near misses, swaps and repeats common; lengths 0 to 12.
    const word = () =>
      Array.from({ length: Math.floor(next() * 13) }, () => 'ABÉ'[Math.floor(next() * 3)]).join('');
    for (let n = 0; n < 20_000; n += 1) {
      const [a, b, limit] = [word(), word(), 1 + Math.floor(next() * 2)];
      expect(editsWithin(a, b, limit), `${a} ${b} ${limit}`).toBe(
        Math.min(editDistance(a, b), limit + 1),
      );
    }
  });

  it('counts a swap of neighbours as one edit, as the warnings do (DATABSAE_URL)', () => {
    expect(editsWithin('DATABSAE_URL', 'DATABASE_URL', 2)).toBe(1);
    expect(editsWithin('DATABSE_URL', 'DATABASE_URL', 2)).toBe(1);
    expect(editsWithin('HOME', 'HOST', 1)).toBe(2);
    // Letters beyond ASCII are compared as any others.
    expect(editsWithin('ÉÉÉ', 'ÉÉÉ', 1)).toBe(0);
    expect(editsWithin('ÉTÉ', 'ÉTÈ', 1)).toBe(1);
  });
});
