import { sql, type Kysely } from 'kysely';
import { deleteInBatches, pruneBatchRows } from '../db/delete-in-batches.js';
import type { Database } from '../db/schema.js';
import { checkpointRecord } from './checkpoint.js';
import { nextSeal } from './seal.js';

/**
 * Deletes the oldest entries stamped before `before` (ms), oldest first, in short batches
 * (src/db/delete-in-batches.ts), without breaking the chain: each batch, in one transaction
 * with the head row locked, moves the checkpoint (`pruned_seq`, `pruned_hash`) to the last entry
 * it deleted, and keeps that entry's record (`pruned_entry`, src/audit/checkpoint.ts) so verify
 * can tell when it was stamped; a whole seal is renewed over the moved checkpoint. Only a prefix
 * of the chain goes: the walk stops at the first entry that is not old enough.
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
        const head = await trx
          .updateTable('audit_head')
          .set({ pruned_seq: sql`pruned_seq` })
          .where('id', '=', 1)
          .returning(['seq', 'hash', 'pruned_seq', 'pruned_hash', 'seal', 'sealed_since'])
          .executeTakeFirstOrThrow();
        const oldest = await trx
          .selectFrom('audit_log')
          .selectAll()
          .orderBy('seq')
          .limit(limit)
          .execute();
        let last: (typeof oldest)[number] | undefined;
        let count = 0;
        for (const row of oldest) {
          if (Number(row.at) >= before) break;
          last = row;
          count += 1;
        }
        if (last === undefined) return { numDeletedRows: 0n };
        const deleted = await trx
          .deleteFrom('audit_log')
          .where('seq', '<=', last.seq)
          .executeTakeFirst();
        const checkpoint = { pruned_seq: Number(last.seq), pruned_hash: last.hash };
        await trx
          .updateTable('audit_head')
          .set({
            ...checkpoint,
            pruned_entry: checkpointRecord(last),
            ...nextSeal(head, { ...head, ...checkpoint }),
          })
          .where('id', '=', 1)
          .execute();
        // A short batch (fewer than `limit` old enough) ends the prune.
        return { numDeletedRows: count < limit ? deleted.numDeletedRows : BigInt(limit) };
      }),
    { firstLimit: batchRows },
  );
}
