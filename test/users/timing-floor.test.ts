import { describe, expect, it } from 'vitest';
import { createTimingFloor } from '../../src/users/timing-floor.js';

const timed = async (work: () => Promise<void>) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

// A wait it should not make is made long (seconds), so that "no wait" can be told from it by a
// bound a loaded machine's pause cannot reach; a wait it should make is checked from below.
describe('the verification timing floor', () => {
  it('pads nothing while only today’s argon2id is verified', async () => {
    const floor = createTimingFloor();
    await floor.pad('argon2id:19456,2,1', 3_000);
    // Padded, this would wait out most of the 3 s mean.
    expect(await timed(() => floor.pad('argon2id:19456,2,1', 5))).toBeLessThan(1_000);
  });

  it('once a slower old kind was seen, a quicker verification, of any kind, waits for it', async () => {
    const floor = createTimingFloor();
    await floor.pad('argon2id:19456,2,1', 10);
    await floor.pad('bcrypt:10', 1_500);
    // An unknown address (the argon2id stand-in) now answers in a bcrypt user's time.
    expect(await timed(() => floor.pad('argon2id:19456,2,1', 10))).toBeGreaterThanOrEqual(1_450);
    // The slowest kind itself waits for nothing more (padded again, it would wait 1.5 s).
    expect(await timed(() => floor.pad('bcrypt:10', 1_500))).toBeLessThan(750);
  });
});
