import { describe, expect, it } from 'vitest';
import { createTurnEndWrites } from '../../src/http/turn-end-writes.js';

describe('answers written at the end of the turn', () => {
  it('writes every answer of a turn after the turn’s work, in the order decided', async () => {
    const atTurnEnd = createTurnEndWrites();
    const seen: string[] = [];
    atTurnEnd(() => seen.push('first answer'));
    seen.push('more of the turn');
    atTurnEnd(() => seen.push('second answer'));
    expect(seen).toEqual(['more of the turn']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['more of the turn', 'first answer', 'second answer']);
  });

  it('starts a new batch for answers decided after one was written', async () => {
    const atTurnEnd = createTurnEndWrites();
    const seen: number[] = [];
    atTurnEnd(() => {
      seen.push(1);
      // Decided while the batch is written: the next turn's batch, not lost.
      atTurnEnd(() => seen.push(3));
    });
    atTurnEnd(() => seen.push(2));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([1, 2]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([1, 2, 3]);
  });
});
