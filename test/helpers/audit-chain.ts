import type { Kysely } from 'kysely';
import { appendAuditEntry } from '../../src/audit/append.js';
import { checkpointRecord, fieldsOf } from '../../src/audit/checkpoint.js';
import { auditEntryHash } from '../../src/audit/entry-hash.js';
import type { Database } from '../../src/db/schema.js';

/*
 * What someone who can write the database, and nothing more, can do to the audit chain. The
 * tests use the same moves to make a chain that looks written long ago.
 */

/** Appends `count` entries of an operator's action, as the service's own appends do. */
export async function appendAuditEntries(db: Kysely<Database>, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1)
    await appendAuditEntry(db, {
      type: 'user_renamed',
      userId: null,
      actor: 'test',
      ip: '',
      device: 'test',
      detail: null,
    });
}

/**
 * Rewrites every kept entry as a database-only attacker would to change the past: each entry's
 * `at` moved by `shiftMs`, every hash recomputed from the checkpoint's on, and the head moved to
 * the new last hash. The seal is not touched: it cannot be made without AUDIT_KEY.
 */
export async function rewriteAuditChain(db: Kysely<Database>, shiftMs: number): Promise<void> {
  const head = await db.selectFrom('audit_head').selectAll().executeTakeFirstOrThrow();
  const rows = await db.selectFrom('audit_log').selectAll().orderBy('seq').execute();
  let prevHash = head.pruned_hash;
  for (const row of rows) {
    const at = Number(row.at) + shiftMs;
    const hash = auditEntryHash({ ...fieldsOf(row), at }, prevHash);
    await db
      .updateTable('audit_log')
      .set({ at, prev_hash: prevHash, hash })
      .where('seq', '=', row.seq)
      .execute();
    prevHash = hash;
  }
  await db.updateTable('audit_head').set({ hash: prevHash }).execute();
}

/**
 * The attack of issue 35: the oldest entries, minutes old, deleted through `throughSeq`, and the
 * checkpoint moved onto the last one deleted, so the first entry kept links to it. With
 * `record`, the checkpoint's record of that entry is written too, as the prune would.
 */
export async function cutOldestAuditEntries(
  db: Kysely<Database>,
  throughSeq: number,
  options: { record?: boolean } = {},
): Promise<void> {
  const last = await db
    .selectFrom('audit_log')
    .selectAll()
    .where('seq', '=', throughSeq)
    .executeTakeFirstOrThrow();
  await db.deleteFrom('audit_log').where('seq', '<=', throughSeq).execute();
  await db
    .updateTable('audit_head')
    .set({ pruned_seq: throughSeq, pruned_hash: last.hash })
    .execute();
  if (options.record === true)
    await db
      .updateTable('audit_head')
      .set({ pruned_entry: checkpointRecord(last) })
      .execute();
}
