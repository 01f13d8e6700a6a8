import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { readCaches } from './caches.js';

/** How often one session's "last seen" is written at most, per instance. */
export const lastSeenEveryMs = 5 * 60 * 1000;
/** How often the sessions seen are written, in one statement per batch. */
const flushEveryMs = 60 * 1000;
/** Ids per statement. */
const flushBatch = 500;
/** Sessions tracked at once at most; past it, reads go unnoted until the next flush. */
const trackedMax = readCaches.lastSeen.entries;

/**
 * "Last seen" for the sessions list, kept off the session read's path: a read only notes its
 * session in memory (one Map lookup; nothing awaited, nothing written), at most once per
 * `lastSeenEveryMs` per session; a timer writes the sessions noted once a minute, in batches,
 * stamped with the flush's time. So each instance writes a session's row at most once per five
 * minutes, and "last seen" is right to within a few minutes. The timer starts with the first
 * read noted (never in the CLI) and does not keep the process alive.
 */
export function createLastSeen(deps: {
  db: Kysely<Database>;
  now: () => number;
  log?: { warn(fields: object, message: string): void };
}) {
  // When each session was last queued for a write; entries older than the interval are dropped
  // at each flush, so this holds the sessions read in the last few minutes only.
  const noted = new Map<string, number>();
  let pending: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  async function write(ids: string[], at: number): Promise<void> {
    for (let from = 0; from < ids.length; from += flushBatch) {
      await deps.db
        .updateTable('sessions')
        .set({ last_seen_at: at })
        .where('id', 'in', ids.slice(from, from + flushBatch))
        .where('revoked_at', 'is', null)
        .execute();
    }
  }

  function flush(): Promise<void> {
    const ids = pending;
    pending = [];
    const now = deps.now();
    for (const [id, at] of noted) if (now - at >= lastSeenEveryMs) noted.delete(id);
    if (ids.length === 0) return flushing;
    flushing = flushing
      .then(() => write(ids, now))
      .catch((error: unknown) => {
        // Worth a line, never an answer: "last seen" is a convenience.
        deps.log?.warn({ err: error }, 'could not write when sessions were last seen');
      });
    return flushing;
  }

  return {
    /** A live session was read at `atMs`: queue its "last seen" if not queued lately. */
    seen(sessionId: string, atMs: number): void {
      const last = noted.get(sessionId);
      if (last !== undefined && atMs - last < lastSeenEveryMs) return;
      if (last === undefined && noted.size >= trackedMax) return;
      noted.set(sessionId, atMs);
      pending.push(sessionId);
      if (timer === undefined) {
        timer = setInterval(() => void flush(), flushEveryMs);
        timer.unref();
      }
    },
    /** Writes what is queued now (the drain calls it before the database closes). */
    async stop(): Promise<void> {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}

export type LastSeen = ReturnType<typeof createLastSeen>;
