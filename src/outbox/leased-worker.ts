/*
 * The loop of a leased outbox's worker, shared by mail (src/mail/mail-worker.ts) and
 * webhooks (src/webhooks/webhook-worker.ts): poll, sweep now and then, claim due rows with a
 * lease (src/outbox/leased-store.ts: no two instances hold one row), deliver each, look again at
 * once while rows keep coming and every `idlePollMs` while idle; on stop, wait for the work in
 * flight and give back the leases still held. What a delivery is, and how its outcome is
 * recorded, is the outbox's own.
 */

/** What the loop needs of the outbox's store. */
export interface LeasedQueue<Claimed> {
  sweep(now: number): Promise<void>;
  claimDue(now: number, holder: string, leaseMs: number, limit: number): Promise<Claimed[]>;
  release(holder: string, now: number, keep?: readonly string[]): Promise<void>;
}

export interface LeasedWorkerSettings {
  /** Between polls while nothing is due: one indexed query each time. */
  idlePollMs: number;
  /** How long a claimed row is this instance's alone (the outbox may renew it). */
  leaseMs: number;
  /** How often the store's `sweep` runs (at the first poll, then at most this often). */
  sweepIntervalMs: number;
}

export interface LeasedWorkerLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface LeasedWorker {
  start(): void;
  /** A row was queued in this process: look now rather than at the next idle poll. */
  wake(): void;
  /** Stops polling, waits for the work in flight (`drain`), then gives back the leases held. */
  stop(): Promise<void>;
}

/** The delay before retry number `attempts`: `baseMs`, doubling with each attempt, up to `maxMs`. */
export function backoffMs(attempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
}

/** After a wake that found nothing: the caller's transaction may not have committed yet. */
const wakeRecheckMs = [100, 1_000];

export interface LeasedWorkerOptions<Claimed> {
  /** Names the outbox in the log lines: `mail`, `webhook`. */
  noun: string;
  queue: LeasedQueue<Claimed>;
  holder: string;
  settings: LeasedWorkerSettings;
  now: () => number;
  log: LeasedWorkerLog;
  /**
   * How many rows a poll at `at` may claim (none: 0), or, when a cap holds it back, the time it
   * lifts: the loop looks again then rather than after `idlePollMs`.
   */
  room(at: number): number | { liftsAt: number };
  /**
   * Delivers one claimed row and records its outcome; `polledAt` is when the poll claimed it. A
   * rejection is logged: the lease then runs out and the row is tried again.
   */
  deliver(row: Claimed, polledAt: number): Promise<unknown>;
  /** Log fields naming a row. */
  describe(row: Claimed): object;
  /**
   * Waits for the work in flight once polling stopped (the poll in flight, `undefined` if none)
   * and says which rows' leases must be kept rather than given back. Default: the poll's end, none.
   */
  drain?(poll: Promise<void> | undefined): Promise<readonly string[]>;
}

/**
 * One poll: the sweep when it is due, then a claim of as many due rows as there is room for,
 * each delivered. Busy when it claimed any; `liftsAt` when a cap held it back.
 */
async function poll<Claimed>(
  options: LeasedWorkerOptions<Claimed>,
  sweep: { nextAt: number },
): Promise<{ busy: boolean; liftsAt?: number }> {
  const { noun, queue, holder, settings, log } = options;
  const at = options.now();
  if (at >= sweep.nextAt) {
    sweep.nextAt = at + settings.sweepIntervalMs;
    await queue.sweep(at);
  }
  const room = options.room(at);
  if (typeof room !== 'number') return { busy: false, liftsAt: room.liftsAt };
  if (room <= 0) return { busy: false };
  const claimed = await queue.claimDue(at, holder, settings.leaseMs, room);
  await Promise.all(
    claimed.map((row) =>
      options
        .deliver(row, at)
        .catch((error: unknown) =>
          log.warn(
            { ...options.describe(row), err: error },
            `recording a ${noun} delivery failed; it is tried again when its lease ends`,
          ),
        ),
    ),
  );
  return { busy: claimed.length > 0 };
}

export function createLeasedWorker<Claimed>(options: LeasedWorkerOptions<Claimed>): LeasedWorker {
  const { noun, queue, holder, settings, now, log } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  // Until `start`: a row queued before then (or by the CLI, which never starts it) wakes nothing.
  let stopping = true;
  let wokenWhileRunning = false;
  let rechecks: number[] = [];
  const sweep = { nextAt: 0 };

  function schedule(delayMs: number): void {
    if (stopping) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delayMs);
    // The worker never keeps the process alive by itself: the drain decides when to exit.
    timer.unref();
  }

  function tick(): void {
    timer = undefined;
    if (stopping || running !== undefined) return;
    wokenWhileRunning = false;
    running = poll(options, sweep).then(
      ({ busy, liftsAt }) => {
        running = undefined;
        // Capped: nothing can start before the cap lifts; look again then.
        if (liftsAt !== undefined) return schedule(Math.max(1, liftsAt - now()));
        if (busy || wokenWhileRunning) return schedule(0);
        const recheck = rechecks.shift();
        schedule(recheck ?? settings.idlePollMs);
      },
      (error: unknown) => {
        running = undefined;
        log.warn({ err: error }, `${noun} outbox poll failed; trying again shortly`);
        schedule(settings.idlePollMs);
      },
    );
  }

  return {
    start() {
      stopping = false;
      schedule(0);
    },
    wake() {
      if (stopping) return;
      rechecks = [...wakeRecheckMs];
      if (running !== undefined) wokenWhileRunning = true;
      else schedule(0);
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      timer = undefined;
      let keep: readonly string[] = [];
      if (options.drain === undefined) await running;
      else keep = await options.drain(running);
      try {
        await queue.release(holder, now(), keep);
      } catch (error) {
        log.warn({ err: error }, `giving back ${noun} leases failed; they end by themselves`);
      }
    },
  };
}
