import { performance } from 'node:perf_hooks';
import type { DeleteResult, Kysely } from 'kysely';
import type { Database } from './schema.js';
import { beginPrunePacing } from './wal-checkpoints.js';

/**
 * Rows the first prune statement of a pass deletes at most. On SQLite a statement runs on the
 * event loop and holds the database's one writer, so a sign-in waits behind it; what a row costs
 * depends on the store (about 0.06 ms on a store of 3,000,000 sessions, its pages of several
 * B-trees with random keys read through a small page cache, and a few µs on a small one), so
 * each batch after the first is sized from how long the last one took (docs/performance.md,
 * "Pruning").
 */
export const pruneBatchRows = 100;

/** How long one prune statement should hold the loop. */
export const pruneStepTargetMs = 4;

const fewestRows = 10;
const mostRows = 2_000;

/** Told of each statement of a pass, and of each checkpoint between them: for the benchmark. */
export type PruneStatementObserver = (ms: number, rows: number, checkpointMs?: number) => void;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The next batch's size from the last step's time: scaled toward `pruneStepTargetMs`, at most
 * doubled at a step (one fast statement on a warm cache says little about the next) and kept
 * within [fewestRows, mostRows].
 */
export function nextBatchRows(limit: number, ms: number): number {
  const scaled = Math.floor((limit * pruneStepTargetMs) / Math.max(ms, 0.05));
  return Math.max(fewestRows, Math.min(mostRows, limit * 2, scaled));
}

/**
 * Runs `deleteBatch` (one statement deleting at most `limit` rows) until a batch comes back
 * short, yielding to the event loop between batches so requests and other writers run in
 * between, and sizing each batch from the time the last one took. On SQLite the log's
 * checkpoint is taken after each batch, in a turn of its own (src/db/wal-checkpoints.ts): it
 * copies what that batch wrote, so it stays about as short. Resolves to the number of rows deleted.
 */
export async function deleteInBatches(
  db: Kysely<Database>,
  deleteBatch: (limit: number) => Promise<DeleteResult>,
  {
    firstLimit = pruneBatchRows,
    observe,
  }: { firstLimit?: number; observe?: PruneStatementObserver } = {},
): Promise<number> {
  const pacing = await beginPrunePacing(db);
  let total = 0;
  let limit = firstLimit;
  try {
    for (;;) {
      let started = performance.now();
      const deleted = Number((await deleteBatch(limit)).numDeletedRows);
      const ms = performance.now() - started;
      total += deleted;
      if (deleted < limit) {
        observe?.(ms, deleted);
        return total;
      }
      let checkpointMs: number | undefined;
      if (pacing !== undefined) {
        await yieldToEventLoop();
        started = performance.now();
        await pacing.checkpoint();
        checkpointMs = performance.now() - started;
      }
      observe?.(ms, deleted, checkpointMs);
      limit = nextBatchRows(limit, ms);
      await yieldToEventLoop();
    }
  } finally {
    await pacing?.end();
  }
}

/** The tables of single-use secrets kept by digest (`token_hash`) until they expire. */
type ExpiringTable = 'signin_challenges' | 'identity_link_offers';

/** Deletes the rows of `table` that expired before `before`, in batches. */
export function deleteExpired(
  db: Kysely<Database>,
  table: ExpiringTable,
  before: number,
): Promise<number> {
  return deleteInBatches(db, (limit) =>
    db
      .deleteFrom(table)
      .where('token_hash', 'in', (eb) =>
        eb.selectFrom(table).select('token_hash').where('expires_at', '<', before).limit(limit),
      )
      .executeTakeFirst(),
  );
}
