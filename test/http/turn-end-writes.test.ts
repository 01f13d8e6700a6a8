import { describe, expect, it } from 'vitest';
import { createTurnEndWrites } from '../../src/http/turn-end-writes.js';

describe('answers written at the end of the turn', () => {
  it('writes every answer of a turn after the turn’s work, in the order decided', async () => {
    const atTurnEnd = createTurnEndWrites(() => {
      throw new Error('no write here fails');
    });
    const seen: string[] = [];
    atTurnEnd(() => seen.push('first answer'));
    seen.push('more of the turn');
    atTurnEnd(() => seen.push('second answer'));
    expect(seen).toEqual(['more of the turn']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['more of the turn', 'first answer', 'second answer']);
  });

  it('starts a new batch for answers decided after one was written', async () => {
    const atTurnEnd = createTurnEndWrites(() => {
      throw new Error('no write here fails');
    });
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

  it('writes the rest of a turn’s answers when one throws, and reports the failure', async () => {
    const failures: unknown[] = [];
    const atTurnEnd = createTurnEndWrites((error) => failures.push(error));
    const seen: string[] = [];
    atTurnEnd(() => seen.push('first'));
    atTurnEnd(() => {
      throw new Error('a write that throws');
    });
    atTurnEnd(() => seen.push('third'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['first', 'third']);
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toContain('a write that throws');
  });

  it('writes the rest even when reporting a failure throws too', async () => {
    const atTurnEnd = createTurnEndWrites(() => {
      throw new Error('the log is gone');
    });
    const seen: string[] = [];
    atTurnEnd(() => {
      throw new Error('a write that throws');
    });
    atTurnEnd(() => seen.push('after'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['after']);
  });
});
