import type { Kysely } from 'kysely';

/**
 * The audit chain's checkpoint and head, made checkable (src/audit/checkpoint.ts, seal.ts):
 *
 * - `pruned_entry`: the last entry the retention prune removed, as JSON (its fields and its
 *   `prevHash`). It hashes to `pruned_hash`, which the oldest kept entry names, so the time it
 *   was stamped is the chain's own: `audit verify` flags a checkpoint that passed entries younger
 *   than AUDIT_RETENTION_DAYS. Null: nothing pruned yet (or pruned before this migration, which
 *   verify reports until the next prune records one).
 * - `seal`, `sealed_since`: an HMAC of the head and the checkpoint under AUDIT_KEY, a key the
 *   database does not hold, and the head's seq when `gatehouse audit seal` started it. Null:
 *   not sealed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_head').addColumn('pruned_entry', 'text').execute();
  await db.schema.alterTable('audit_head').addColumn('seal', 'text').execute();
  await db.schema.alterTable('audit_head').addColumn('sealed_since', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['sealed_since', 'seal', 'pruned_entry'])
    await db.schema.alterTable('audit_head').dropColumn(column).execute();
}
