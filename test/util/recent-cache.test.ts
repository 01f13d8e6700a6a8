import { describe, expect, it } from 'vitest';
import { RecentCache } from '../../src/util/recent-cache.js';

/**
 * Steps are `set k v` or `get k`; the result is what each `get` returned, in order
 * (`-` for a miss).
 */
function play(capacity: number, steps: string[], maxWeight?: number): string[] {
  // Weighed, an entry weighs its value's length: `set a 111` weighs 3.
  const weight =
    maxWeight === undefined
      ? undefined
      : { maxWeight, weigh: (_key: string, value: string | null) => value?.length ?? 0 };
  const cache = new RecentCache<string, string | null>(capacity, weight);
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

describe('RecentCache bounded by weight', () => {
  it.each<[string, number, number, string[], string[]]>([
    [
      'up to the weight every entry is kept',
      10,
      6,
      ['set a 11', 'set b 22', 'set c 33', 'get a', 'get b', 'get c'],
      ['11', '22', '33'],
    ],
    [
      'past the weight the oldest entries go until the rest fit',
      10,
      6,
      ['set a 11', 'set b 22', 'set c 33333', 'get a', 'get b', 'get c'],
      ['-', '-', '33333'],
    ],
    [
      'only as many entries go as the weight needs',
      10,
      6,
      ['set a 1', 'set b 22', 'set c 333', 'set d 4', 'get a', 'get b', 'get c', 'get d'],
      ['-', '22', '333', '4'],
    ],
    [
      'a hit makes an entry the newest for the weight bound too',
      10,
      4,
      ['set a 11', 'set b 11', 'get a', 'set c 11', 'get a', 'get b', 'get c'],
      ['11', '11', '-', '11'],
    ],
    [
      'an entry heavier than the whole budget is not kept and evicts nothing',
      10,
      4,
      ['set a 11', 'set b 12345', 'get a', 'get b'],
      ['11', '-'],
    ],
    [
      'an entry as heavy as the whole budget is kept alone',
      10,
      4,
      ['set a 11', 'set b 1234', 'get a', 'get b'],
      ['-', '1234'],
    ],
    [
      'setting a key again weighs its new value, not both',
      10,
      4,
      ['set a 1', 'set b 1', 'set a 111', 'set c 1', 'get a', 'get b', 'get c'],
      ['111', '-', '1'],
    ],
    [
      'setting a key again to a value heavier than the budget forgets it',
      10,
      4,
      ['set a 1', 'set a 12345', 'get a'],
      ['-'],
    ],
    [
      'a forgotten entry gives its weight back',
      10,
      4,
      ['set a 1111', 'set b 1', 'set c 111', 'get a', 'get b', 'get c'],
      ['-', '1', '111'],
    ],
    [
      'the entry bound still holds under a weight bound',
      2,
      100,
      ['set a 1', 'set b 1', 'set c 1', 'get a', 'get b', 'get c'],
      ['-', '1', '1'],
    ],
    [
      'entries that weigh nothing are bounded by the entry bound alone',
      2,
      0,
      ['set a', 'set b', 'set c', 'get a', 'get b', 'get c'],
      ['-', '', ''],
    ],
    ['a budget of zero keeps nothing that weighs', 10, 0, ['set a 1', 'get a'], ['-']],
  ])('%s', (_behaviour, capacity, maxWeight, steps, reads) => {
    expect(play(capacity, steps, maxWeight)).toEqual(reads);
  });
});
