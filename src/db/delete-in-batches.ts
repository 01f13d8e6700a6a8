import type { DeleteResult } from 'kysely';

/**
 * Rows one prune statement deletes at most. On SQLite the statement runs on the event loop and
 * holds the database's one writer: a batch must stay short enough that a sign-in waiting behind
 * it does not notice. On a store of 3,000,000 sessions a deleted row cost about 0.1 ms (its
 * pages of three B-trees with random keys, and their commit): 1,000 rows held the loop for
 * 97 ms, so 100 (docs/performance.md, "Pruning").
 */
export const pruneBatchRows = 100;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs `deleteBatch` (one statement deleting at most `limit` rows) until a batch comes back
 * short, yielding to the event loop between batches so requests and other writers run in
 * between. Resolves to the number of rows deleted.
 */
export async function deleteInBatches(
  deleteBatch: (limit: number) => Promise<DeleteResult>,
  limit = pruneBatchRows,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = Number((await deleteBatch(limit)).numDeletedRows);
    total += deleted;
    if (deleted < limit) return total;
    await yieldToEventLoop();
  }
}
