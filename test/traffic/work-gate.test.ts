import { describe, expect, it } from 'vitest';
import { GateFullError, WorkGate } from '../../src/traffic/work-gate.js';

type Admission = 'runs' | 'waits' | 'refused';

/**
 * Offers one task per arrival, in order, through `tryRun`; an arrival is named by its party's
 * letter and a number (`a1` is party `a`'s first task). Each task holds its slot until released.
 * Then releases the running tasks one at a time, oldest first, and records who started when.
 */
async function play(gate: WorkGate, arrivals: string[]) {
  const started: string[] = [];
  const holds: Array<() => void> = [];
  const runs: Array<Promise<void>> = [];
  const admissions = arrivals.map((label): Admission => {
    const run = gate.tryRun(
      () => {
        started.push(label);
        return new Promise<void>((release) => holds.push(release));
      },
      label.slice(0, 1),
    );
    if (run === undefined) return 'refused';
    runs.push(run);
    return started.includes(label) ? 'runs' : 'waits';
  });
  const load = { active: gate.active, queued: gate.queued };
  for (let released = 0; released < holds.length; released += 1) {
    holds[released]!();
    // The next waiter starts after its promise resolves: let the microtasks run.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(runs);
  return { admissions, load, started, after: { active: gate.active, queued: gate.queued } };
}

/** A promise the test settles by hand (Promise.withResolvers is past the project's ES2023 lib). */
function held<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

describe('WorkGate', () => {
  it.each<{
    behaviour: string;
    gate: [concurrency: number, queueMax: number, partyQueueMax?: number];
    arrivals: string[];
    admissions: Admission[];
    load: { active: number; queued: number };
    started: string[];
  }>([
    {
      behaviour: 'tasks up to the concurrency run at once; with no queue the next is refused',
      gate: [2, 0],
      arrivals: ['a1', 'b1', 'c1'],
      admissions: ['runs', 'runs', 'refused'],
      load: { active: 2, queued: 0 },
      started: ['a1', 'b1'],
    },
    {
      behaviour: 'past the concurrency tasks wait, up to the queue bound, whatever their party',
      gate: [1, 2],
      arrivals: ['a1', 'b1', 'c1', 'd1'],
      admissions: ['runs', 'waits', 'waits', 'refused'],
      load: { active: 1, queued: 2 },
      started: ['a1', 'b1', 'c1'],
    },
    {
      behaviour: 'one party may hold at most its share of the queue; others still get in',
      gate: [1, 4, 1],
      arrivals: ['a1', 'a2', 'a3', 'b1', 'b2'],
      admissions: ['runs', 'waits', 'refused', 'waits', 'refused'],
      load: { active: 1, queued: 2 },
      started: ['a1', 'a2', 'b1'],
    },
    {
      behaviour: 'a party share larger than the queue is capped at the queue',
      gate: [1, 2, 5],
      arrivals: ['a1', 'a2', 'a3', 'a4'],
      admissions: ['runs', 'waits', 'waits', 'refused'],
      load: { active: 1, queued: 2 },
      started: ['a1', 'a2', 'a3'],
    },
    {
      behaviour: 'the share counts only waiting tasks: a party may run and wait its share',
      gate: [2, 4, 1],
      arrivals: ['a1', 'a2', 'a3', 'a4'],
      admissions: ['runs', 'runs', 'waits', 'refused'],
      load: { active: 2, queued: 1 },
      started: ['a1', 'a2', 'a3'],
    },
    {
      behaviour: 'with a free slot neither the queue bound nor the share applies',
      gate: [3, 0, 0],
      arrivals: ['a1', 'a2', 'a3', 'a4'],
      admissions: ['runs', 'runs', 'runs', 'refused'],
      load: { active: 3, queued: 0 },
      started: ['a1', 'a2', 'a3'],
    },
    {
      behaviour: 'waiters are admitted round-robin between parties, one each in turn',
      gate: [1, 10],
      arrivals: ['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'c1'],
      admissions: ['runs', 'waits', 'waits', 'waits', 'waits', 'waits', 'waits'],
      load: { active: 1, queued: 6 },
      started: ['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4'],
    },
    {
      behaviour: 'the round starts with the party that queued first, not the one running',
      gate: [1, 10],
      arrivals: ['a1', 'b1', 'b2', 'a2', 'c1'],
      admissions: ['runs', 'waits', 'waits', 'waits', 'waits'],
      load: { active: 1, queued: 4 },
      started: ['a1', 'b1', 'a2', 'c1', 'b2'],
    },
    {
      behaviour: 'within one party waiters start in the order they came',
      gate: [1, 3],
      arrivals: ['a1', 'a2', 'a3', 'a4'],
      admissions: ['runs', 'waits', 'waits', 'waits'],
      load: { active: 1, queued: 3 },
      started: ['a1', 'a2', 'a3', 'a4'],
    },
    {
      behaviour: 'a flood from one party is capped and everyone else is served between its tasks',
      gate: [1, 6, 2],
      arrivals: ['f1', 'f2', 'f3', 'f4', 'f5', 'a1', 'b1', 'f6'],
      admissions: ['runs', 'waits', 'waits', 'refused', 'refused', 'waits', 'waits', 'refused'],
      load: { active: 1, queued: 4 },
      started: ['f1', 'f2', 'a1', 'b1', 'f3'],
    },
    {
      behaviour: 'two slots hand each freed slot to the next party in the round',
      gate: [2, 10],
      arrivals: ['a1', 'a2', 'a3', 'a4', 'b1', 'c1'],
      admissions: ['runs', 'runs', 'waits', 'waits', 'waits', 'waits'],
      load: { active: 2, queued: 4 },
      started: ['a1', 'a2', 'a3', 'b1', 'c1', 'a4'],
    },
  ])(
    '$behaviour',
    async ({ gate: [concurrency, queueMax, partyQueueMax], arrivals, ...expected }) => {
      const gate = new WorkGate(concurrency, queueMax, partyQueueMax);
      const played = await play(gate, arrivals);
      expect(played.admissions).toEqual(expected.admissions);
      expect(played.load).toEqual(expected.load);
      expect(played.started).toEqual(expected.started);
      // Every slot came back and nobody is left waiting.
      expect(played.after).toEqual({ active: 0, queued: 0 });
    },
  );

  it('without a party every task is one party: the share caps them all', async () => {
    const gate = new WorkGate(1, 4, 1);
    const hold = held<void>();
    const first = gate.tryRun(() => hold.promise);
    const second = gate.tryRun(() => Promise.resolve());
    const third = gate.tryRun(() => Promise.resolve());
    expect([first === undefined, second === undefined, third === undefined]).toEqual([
      false,
      false,
      true,
    ]);
    hold.resolve();
    await Promise.all([first, second]);
  });

  it('run on a full gate rejects with GateFullError and never starts the task', async () => {
    const gate = new WorkGate(1, 0);
    const hold = held<void>();
    const running = gate.run(() => hold.promise, 'a');
    let started = false;
    const refused = gate.run(async () => {
      started = true;
    }, 'b');
    await expect(refused).rejects.toThrow(GateFullError);
    await expect(refused).rejects.toMatchObject({
      name: 'GateFullError',
      message: 'work queue is full',
    });
    expect(started).toBe(false);
    expect({ active: gate.active, queued: gate.queued }).toEqual({ active: 1, queued: 0 });
    hold.resolve();
    await running;
  });

  it.each<[string, () => Promise<string>, string]>([
    [
      'a task that rejects passes its slot to the next waiter and its error out',
      () => Promise.reject(new Error('boom')),
      'boom',
    ],
    [
      'a task that throws before returning a promise passes its slot on and its error out',
      () => {
        throw new Error('sync boom');
      },
      'sync boom',
    ],
  ])('%s', async (_behaviour, task, message) => {
    const gate = new WorkGate(1, 2);
    const hold = held<string>();
    const first = gate.run(() => hold.promise, 'a');
    const failing = gate.run(task, 'b').then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    const next = gate.run(() => Promise.resolve('next ran'), 'c');
    expect({ active: gate.active, queued: gate.queued }).toEqual({ active: 1, queued: 2 });
    hold.resolve('first ran');
    expect(await Promise.all([first, failing, next])).toEqual(['first ran', message, 'next ran']);
    expect({ active: gate.active, queued: gate.queued }).toEqual({ active: 0, queued: 0 });
  });

  it('a task’s value is what run resolves to', async () => {
    const gate = new WorkGate(1, 0);
    expect(await gate.run(() => Promise.resolve(42))).toBe(42);
    expect(await gate.tryRun(() => Promise.resolve('x'), 'a')).toBe('x');
  });
});
