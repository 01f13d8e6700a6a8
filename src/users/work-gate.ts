/** Thrown when the queue is full: the caller answers 503 + Retry-After instead of queueing forever. */
export class GateFullError extends Error {
  constructor() {
    super('work queue is full');
    this.name = 'GateFullError';
  }
}

/**
 * Bounded concurrency with a bounded wait queue. Written by hand: the libraries (p-limit,
 * p-queue) have no cap on the queue, and the cap is the point (memory under a flood).
 */
export class WorkGate {
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueMax: number,
  ) {}

  get active(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  #full(): boolean {
    return this.#active >= this.concurrency && this.#waiting.length >= this.queueMax;
  }

  /** Like `run`, but `undefined` at once, with `task` never started, when the queue is full. */
  tryRun<T>(task: () => Promise<T>): Promise<T> | undefined {
    return this.#full() ? undefined : this.run(task);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#full()) throw new GateFullError();
    if (this.#active >= this.concurrency) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#active += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter, so #active stays counted.
      if (next) next();
      else this.#active -= 1;
    }
  }
}
