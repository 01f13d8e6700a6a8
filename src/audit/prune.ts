import { sql, type Kysely } from 'kysely';
import { deleteInBatches, pruneBatchRows } from '../db/delete-in-batches.js';
import type { Database } from '../db/schema.js';

/**
 * Deletes the oldest entries stamped before `before` (ms), oldest first, in short batches
 * (src/db/delete-in-batches.ts), without breaking the chain: each batch, in one transaction
 * with the head row locked, moves the checkpoint (`pruned_seq`, `pruned_hash`) to the last entry
 * it deleted, so the oldest entry kept still links to a recorded hash. Only a prefix of the
 * chain goes: the walk stops at the first entry that is not old enough.
 */
export function pruneAuditLog(
  db: Kysely<Database>,
  before: number,
  batchRows = pruneBatchRows,
): Promise<number> {
  return deleteInBatches(
    db,
    (limit) =>
      db.transaction().execute(async (trx) => {
        // Locks the head (PostgreSQL) or takes the writer (SQLite) before reading the oldest.
        await trx
          .updateTable('audit_head')
          .set({ pruned_seq: sql`pruned_seq` })
          .where('id', '=', 1)
          .execute();
        const oldest = await trx
          .selectFrom('audit_log')
          .select(['seq', 'at', 'hash'])
          .orderBy('seq')
          .limit(limit)
          .execute();
        let last: { seq: number; hash: string } | undefined;
        let count = 0;
        for (const row of oldest) {
          if (Number(row.at) >= before) break;
          last = { seq: Number(row.seq), hash: row.hash };
          count += 1;
        }
        if (last === undefined) return { numDeletedRows: 0n };
        const deleted = await trx
          .deleteFrom('audit_log')
          .where('seq', '<=', last.seq)
          .executeTakeFirst();
        await trx
          .updateTable('audit_head')
          .set({ pruned_seq: last.seq, pruned_hash: last.hash })
          .where('id', '=', 1)
          .execute();
        // A short batch (fewer than `limit` old enough) ends the prune.
        return { numDeletedRows: count < limit ? deleted.numDeletedRows : BigInt(limit) };
      }),
    { firstLimit: batchRows },
  );
}
