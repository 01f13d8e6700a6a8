import { describe, expect, it } from 'vitest';
import { RequestBudget } from '../../src/traffic/request-budget.js';

describe('a request budget', () => {
  it('lets a group spend its burst, then refuses with the seconds until it may go on', () => {
    let ms = 0;
    const budget = new RequestBudget({ perSecond: 2, burst: 4 }, () => ms);
    expect([1, 2, 3, 4].map(() => budget.take('a', 1))).toEqual([0, 0, 0, 0]);
    expect(budget.take('a', 1)).toBe(1);
    expect(budget.take('a', 4)).toBe(2);
    ms += 500;
    expect(budget.take('a', 1)).toBe(0);
    expect(budget.take('a', 1)).toBe(1);
  });

  it('refills at its rate up to the burst, never beyond', () => {
    let ms = 0;
    const budget = new RequestBudget({ perSecond: 10, burst: 5 }, () => ms);
    expect(budget.take('a', 5)).toBe(0);
    ms += 60_000;
    expect(budget.take('a', 5)).toBe(0);
    expect(budget.take('a', 1)).toBe(1);
  });

  it('keeps one bucket per group: one emptied leaves the others full', () => {
    const budget = new RequestBudget({ perSecond: 1, burst: 3 }, () => 0);
    expect(budget.take('a', 3)).toBe(0);
    expect(budget.take('a', 1)).toBe(1);
    expect(budget.take('b', 3)).toBe(0);
  });

  it('holds at most groupsMax buckets, forgetting the group seen least recently', () => {
    const budget = new RequestBudget({ perSecond: 1, burst: 2 }, () => 0, 2);
    expect(budget.take('a', 2)).toBe(0);
    expect(budget.take('b', 2)).toBe(0);
    // Seen again: 'b' is now the least recent.
    expect(budget.take('a', 1)).toBe(1);
    expect(budget.take('c', 2)).toBe(0);
    // 'a' is still remembered (empty); 'b' was forgotten and starts full.
    expect(budget.take('a', 1)).toBe(1);
    expect(budget.take('b', 2)).toBe(0);
  });
});
