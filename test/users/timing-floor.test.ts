import { describe, expect, it } from 'vitest';
import { createTimingFloor } from '../../src/users/timing-floor.js';

const timed = async (work: () => Promise<void>) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

describe('the verification timing floor', () => {
  it('pads nothing while only today’s argon2id is verified', async () => {
    const floor = createTimingFloor();
    await floor.pad('argon2id:19456,2,1', 30);
    expect(await timed(() => floor.pad('argon2id:19456,2,1', 5))).toBeLessThan(15);
  });

  it('once a slower old kind was seen, a quicker verification, of any kind, waits for it', async () => {
    const floor = createTimingFloor();
    await floor.pad('argon2id:19456,2,1', 10);
    await floor.pad('bcrypt:10', 60);
    // An unknown address (the argon2id stand-in) now answers in a bcrypt user's time.
    expect(await timed(() => floor.pad('argon2id:19456,2,1', 10))).toBeGreaterThanOrEqual(45);
    // The slowest kind itself waits for nothing more.
    expect(await timed(() => floor.pad('bcrypt:10', 60))).toBeLessThan(15);
  });
});
