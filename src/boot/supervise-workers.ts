import cluster, { type Worker } from 'node:cluster';

/** A worker that dies sooner than this after it was forked failed to start. */
const quickFailureMs = 10_000;
/** Quick failures in a row after which the primary gives up, as a single process would. */
const maxQuickFailures = 5;
const maxBackoffMs = 30_000;

/**
 * Forks `count` workers and keeps them running: a worker that exits with an error is forked
 * again, after a back-off that doubles while workers keep failing quickly (250 ms, 500 ms, …).
 * After five quick failures in a row (a port in use, a database that refuses, a bad setting
 * only the worker sees) the primary stops every worker and exits 1, the way `WORKERS=1` exits
 * on a failed start, instead of forking forever. SIGTERM/SIGINT stop the workers; once all
 * have exited the primary exits 0.
 */
export function superviseWorkers(count: number, env: Record<string, string | undefined>): void {
  const forkedAt = new Map<Worker, number>();
  // A restarted worker takes the slot of the one it replaces (GATEHOUSE_WORKER_SLOT): its
  // metrics continue the same series, so a restart reads as a counter reset, not a new series.
  const slots = new Map<Worker, number>();
  let running = 0;
  let quickFailures = 0;
  let stopping = false;
  let exitCode = 0;
  const pending = new Set<NodeJS.Timeout>();

  const fork = (slot: number) => {
    const worker = cluster.fork({ ...env, GATEHOUSE_WORKER_SLOT: String(slot) });
    forkedAt.set(worker, Date.now());
    slots.set(worker, slot);
    running += 1;
  };
  const stop = (code: number) => {
    stopping = true;
    exitCode = Math.max(exitCode, code);
    for (const timer of pending) clearTimeout(timer);
    pending.clear();
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    if (running === 0) process.exit(exitCode);
  };

  cluster.on('exit', (worker, code, signal) => {
    running -= 1;
    const lived = Date.now() - (forkedAt.get(worker) ?? 0);
    forkedAt.delete(worker);
    const slot = slots.get(worker) ?? 0;
    slots.delete(worker);
    const failed = code !== 0 || signal !== null;
    if (!stopping && failed) {
      quickFailures = lived < quickFailureMs ? quickFailures + 1 : 0;
      const how = signal === null ? `with ${code}` : `on ${signal}`;
      if (quickFailures >= maxQuickFailures) {
        process.stderr.write(
          `gatehouse: workers failed ${quickFailures} times in a row within ${quickFailureMs / 1000} s of starting (last exited ${how}); stopping. The cause is above.\n`,
        );
        stop(1);
        return;
      }
      const delayMs = quickFailures === 0 ? 0 : Math.min(maxBackoffMs, 125 * 2 ** quickFailures);
      process.stderr.write(
        `gatehouse: worker ${worker.process.pid} exited ${how}; restarting in ${delayMs} ms\n`,
      );
      const timer = setTimeout(() => {
        pending.delete(timer);
        fork(slot);
      }, delayMs);
      pending.add(timer);
    }
    if (running === 0 && pending.size === 0) process.exit(exitCode);
  });
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
  for (let slot = 0; slot < count; slot += 1) fork(slot);
}
