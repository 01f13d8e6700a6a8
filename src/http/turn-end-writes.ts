/**
 * Answers decided while the event loop handles one turn's socket reads, written together when
 * that turn's reads are done (the loop's check phase, `setImmediate`), in the order decided.
 *
 * Why: a reader on the same machine (a proxy, an app's server, a load generator) sleeps
 * between answers; each answer written on its own wakes it, and the wake-up is paid on the
 * writer's core. Written back to back, the later answers find it awake (what that buys is in
 * docs/performance.md). An answer waits at most for the rest of its turn's requests to be
 * decided; alone, not at all.
 *
 * A write that throws is given to `failed` and the others are still written.
 */
export function createTurnEndWrites(failed: (error: unknown) => void): (write: () => void) => void {
  let queued: (() => void)[] = [];
  const writeQueued = () => {
    const writes = queued;
    queued = [];
    for (const write of writes) {
      try {
        write();
      } catch (error) {
        try {
          failed(error);
        } catch {
          // Reporting the failure failed too (the log): the other answers still go out.
        }
      }
    }
  };
  return (write) => {
    queued.push(write);
    if (queued.length === 1) setImmediate(writeQueued);
  };
}
