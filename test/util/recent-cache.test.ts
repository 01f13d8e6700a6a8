import { describe, expect, it } from 'vitest';
import { RecentCache } from '../../src/util/recent-cache.js';

/**
 * Steps are `set k v` or `get k`; the result is what each `get` returned, in order
 * (`-` for a miss).
 */
function play(capacity: number, steps: string[]): string[] {
  const cache = new RecentCache<string, string | null>(capacity);
  const reads: string[] = [];
  for (const step of steps) {
    const [op, key, value] = step.split(' ') as [string, string, string | undefined];
    if (op === 'set') cache.set(key, value === 'null' ? null : (value ?? ''));
    else {
      const read = cache.get(key);
      reads.push(read === undefined ? '-' : String(read));
    }
  }
  return reads;
}

describe('RecentCache', () => {
  it.each<[string, number, string[], string[]]>([
    ['a value set is read back', 2, ['set a 1', 'get a'], ['1']],
    ['a key never set is a miss', 2, ['get a'], ['-']],
    [
      'up to the capacity every entry is kept',
      2,
      ['set a 1', 'set b 2', 'get a', 'get b'],
      ['1', '2'],
    ],
    [
      'past the capacity the oldest entry is forgotten',
      2,
      ['set a 1', 'set b 2', 'set c 3', 'get a', 'get b', 'get c'],
      ['-', '2', '3'],
    ],
    [
      'a hit makes an entry the newest, so the next oldest goes',
      2,
      ['set a 1', 'set b 2', 'get a', 'set c 3', 'get b', 'get a', 'get c'],
      ['1', '-', '1', '3'],
    ],
    [
      'a miss does not change the order',
      2,
      ['set a 1', 'set b 2', 'get x', 'set c 3', 'get a', 'get b'],
      ['-', '-', '2'],
    ],
    [
      'setting a key again replaces its value and makes it the newest',
      2,
      ['set a 1', 'set b 2', 'set a 9', 'set c 3', 'get a', 'get b', 'get c'],
      ['9', '-', '3'],
    ],
    [
      'setting a key again does not count it twice against the capacity',
      2,
      ['set a 1', 'set a 2', 'set b 3', 'get a', 'get b'],
      ['2', '3'],
    ],
    [
      'a capacity of one keeps only the last entry',
      1,
      ['set a 1', 'set b 2', 'get a', 'get b'],
      ['-', '2'],
    ],
    ['a capacity of zero keeps nothing', 0, ['set a 1', 'get a'], ['-']],
    [
      'a cached null is a hit and is refreshed like any value',
      2,
      ['set a null', 'set b 2', 'get a', 'set c 3', 'get a', 'get b'],
      ['null', 'null', '-'],
    ],
    [
      'a cached empty string is a hit and is refreshed like any value',
      2,
      ['set a', 'set b 2', 'get a', 'set c 3', 'get b'],
      ['', '-'],
    ],
  ])('%s', (_behaviour, capacity, steps, reads) => {
    expect(play(capacity, steps)).toEqual(reads);
  });
});
