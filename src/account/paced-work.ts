/*
 * Work a flow does after its answer (forgot, sign-up, address change: the address's lookup, the
 * secret, the mail in the outbox) costs more when the address has an account. Run on the answer's
 * own heels, that cost showed in the *next* request on the connection (≈ 4.2 vs 2.4 ms median:
 * five tries told an address with an account from one without). So the work is queued here and
 * run on a clock of its own: a tick every `tickMs`, whose phase has nothing to do with when a
 * request came, runs what is queued. A request then waits behind that work only when it happens
 * to arrive during a tick, whatever the address was.
 */

/** A job: what it does, and the log line's words when it fails (an action's PacedJob). */
export interface PacedJob {
  failure: string;
  run(): Promise<void>;
}

export interface PacedWorkSettings {
  /** How often the queue is run (ms). */
  tickMs: number;
  /** Jobs waiting at most; past it a job is dropped and logged (a flood cannot grow memory). */
  maxQueued: number;
  log: { error(fields: object, message: string): void };
}

export interface PacedWork {
  /** Queues a job; it runs at the next tick (or the one after, when a tick is busy). */
  push(job: PacedJob): void;
  /** Runs everything queued now and stops the clock: the service's stop waits for it. */
  drain(): Promise<void>;
  /** Jobs waiting (for tests and metrics). */
  readonly queued: number;
}

export function createPacedWork(settings: PacedWorkSettings): PacedWork {
  const jobs: PacedJob[] = [];
  let running: Promise<void> | null = null;
  let stopped = false;

  const runQueued = async () => {
    // Jobs queued during this run wait for the next tick: a burst never holds the loop longer.
    const batch = jobs.splice(0, jobs.length);
    for (const job of batch) {
      try {
        await job.run();
      } catch (error) {
        settings.log.error({ err: error }, job.failure);
      }
    }
  };
  const tick = () => {
    if (running !== null || jobs.length === 0) return;
    running = runQueued().finally(() => {
      running = null;
    });
  };
  const clock = setInterval(tick, settings.tickMs);
  clock.unref();

  return {
    push(job) {
      if (stopped) {
        // After the stop began nothing runs it later: run it now, the answer is already out.
        void job.run().catch((error: unknown) => settings.log.error({ err: error }, job.failure));
        return;
      }
      if (jobs.length >= settings.maxQueued) {
        settings.log.error({ queued: jobs.length }, `${job.failure}: too much work queued`);
        return;
      }
      jobs.push(job);
    },
    async drain() {
      stopped = true;
      clearInterval(clock);
      if (running !== null) await running;
      await runQueued();
    },
    get queued() {
      return jobs.length;
    },
  };
}
