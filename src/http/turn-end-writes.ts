/**
 * Answers decided while the event loop handles one turn's socket reads, written together when
 * that turn's reads are done (the loop's check phase, `setImmediate`), in the order decided.
 *
 * Why: a reader on the same machine (a proxy, an app's server, a load generator) sleeps
 * between answers; each answer written on its own wakes it, and the wake-up is paid on the
 * writer's core (the scheduler's inter-processor wake-up, a sixth of a session read's CPU in a
 * `perf` profile). Written back to back, the later answers find it awake. Measured: 39-58 µs
 * of CPU per session read against 66-76 µs, in the same run (docs/performance.md). An answer
 * waits at most for the rest of its turn's requests to be decided; alone, not at all.
 */
export function createTurnEndWrites(): (write: () => void) => void {
  let queued: (() => void)[] = [];
  const writeQueued = () => {
    const writes = queued;
    queued = [];
    // Each write catches its own failure (front-read.ts): one cannot stop the others.
    for (const write of writes) write();
  };
  return (write) => {
    queued.push(write);
    if (queued.length === 1) setImmediate(writeQueued);
  };
}
