/** Thrown when the queue is full: the caller answers 503 + Retry-After instead of queueing forever. */
export class GateFullError extends Error {
  constructor() {
    super('work queue is full');
    this.name = 'GateFullError';
  }
}

/** How many tasks a gate runs and holds waiting, right now. */
export interface GateLoad {
  readonly active: number;
  readonly queued: number;
}

/**
 * Bounded concurrency with a bounded wait queue, shared fairly between parties (client
 * addresses, for sign-ins): waiters are admitted round-robin across parties, and one party may
 * hold at most `partyQueueMax` of the queue, so a client flooding it cannot shut others out.
 * Written by hand: the libraries (p-limit, p-queue) have no cap on the queue, and the cap is
 * the point (memory under a flood), nor per-party fairness.
 */
export class WorkGate implements GateLoad {
  #active = 0;
  #queued = 0;
  /** Waiters per party; Map order is the round-robin order (a served party moves to the end). */
  readonly #waiting = new Map<string, Array<() => void>>();
  readonly #partyQueueMax: number;

  constructor(
    private readonly concurrency: number,
    private readonly queueMax: number,
    partyQueueMax = queueMax,
  ) {
    this.#partyQueueMax = Math.min(partyQueueMax, queueMax);
  }

  get active(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#queued;
  }

  #full(party: string): boolean {
    if (this.#active < this.concurrency) return false;
    const own = this.#waiting.get(party)?.length ?? 0;
    return this.#queued >= this.queueMax || own >= this.#partyQueueMax;
  }

  /** Like `run`, but `undefined` at once, with `task` never started, when the queue is full. */
  tryRun<T>(task: () => Promise<T>, party = ''): Promise<T> | undefined {
    return this.#full(party) ? undefined : this.run(task, party);
  }

  async run<T>(task: () => Promise<T>, party = ''): Promise<T> {
    if (this.#full(party)) throw new GateFullError();
    if (this.#active >= this.concurrency) {
      await new Promise<void>((resolve) => {
        const queue = this.#waiting.get(party);
        if (queue === undefined) this.#waiting.set(party, [resolve]);
        else queue.push(resolve);
        this.#queued += 1;
      });
    } else {
      this.#active += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.#next();
      // The slot passes straight to the next waiter, so #active stays counted.
      if (next) next();
      else this.#active -= 1;
    }
  }

  /** The first waiter of the party first in line; that party then goes to the back. */
  #next(): (() => void) | undefined {
    const first = this.#waiting.entries().next();
    if (first.done === true) return undefined;
    const [party, queue] = first.value;
    const resolve = queue.shift();
    this.#waiting.delete(party);
    if (queue.length > 0) this.#waiting.set(party, queue);
    this.#queued -= 1;
    return resolve;
  }
}
