import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { auditPageMax, readRow } from './entries.js';
import { auditEntryHash } from './entry-hash.js';

/**
 * What is wrong with the first bad entry: its fields no longer hash to its hash (`changed`);
 * it is missing, the seq before the next one kept, or the newest entries are gone (`removed`);
 * it does not follow the entry before it (`reordered`: moved, or an entry before it removed and
 * the rest renumbered).
 */
export type AuditProblem = 'changed' | 'removed' | 'reordered';

export interface AuditVerdict {
  ok: boolean;
  /** Entries checked (those kept since the last prune). */
  entries: number;
  /** The newest entry's seq and hash, worth keeping elsewhere (see docs/operations.md). */
  head: { seq: number; hash: string };
  firstBad?: { seq: number; problem: AuditProblem };
}

/**
 * Walks the chain from the prune's checkpoint to the head row: each entry must come next in
 * seq, hash to its stored hash, and name the hash of the entry before it; the head row must
 * name the last one. The first entry that fails is named, and the walk stops there.
 */
export async function verifyAuditLog(db: Kysely<Database>): Promise<AuditVerdict> {
  const headRow = await db
    .selectFrom('audit_head')
    .selectAll()
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  const head = { seq: Number(headRow.seq), hash: headRow.hash };
  let expectedSeq = Number(headRow.pruned_seq) + 1;
  let prevHash = headRow.pruned_hash;
  let entries = 0;
  const bad = (seq: number, problem: AuditProblem): AuditVerdict => ({
    ok: false,
    entries,
    head,
    firstBad: { seq, problem },
  });
  for (;;) {
    const rows = (
      await db
        .selectFrom('audit_log')
        .selectAll()
        .where('seq', '>=', expectedSeq)
        .orderBy('seq')
        .limit(auditPageMax)
        .execute()
    ).map(readRow);
    for (const row of rows) {
      if (row.seq !== expectedSeq) return bad(expectedSeq, 'removed');
      const fields = {
        at: row.at,
        type: row.type,
        userId: row.user_id,
        actor: row.actor,
        ip: row.ip,
        device: row.device,
        detail: row.detail,
      };
      if (auditEntryHash(fields, row.prev_hash) !== row.hash) return bad(row.seq, 'changed');
      if (row.prev_hash !== prevHash) return bad(row.seq, 'reordered');
      entries += 1;
      prevHash = row.hash;
      expectedSeq += 1;
    }
    if (rows.length < auditPageMax) break;
  }
  // The head names the newest entry: entries removed from the end show here.
  if (head.seq !== expectedSeq - 1 || head.hash !== prevHash) return bad(expectedSeq, 'removed');
  return { ok: true, entries, head };
}
