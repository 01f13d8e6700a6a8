import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { checkpointTime, fieldsOf } from './checkpoint.js';
import { auditPageMax, readRow } from './entries.js';
import { auditEntryHash } from './entry-hash.js';
import { sealState, type SealState } from './seal.js';

/**
 * What is wrong, first found first. An entry: its fields no longer hash to its hash
 * (`changed`); it is missing, the seq before the next one kept, or the newest entries are gone
 * (`removed`); it does not follow the entry before it (`reordered`: moved, or an entry before it
 * removed and the rest renumbered). The checkpoint: it keeps no record of the entry it passed,
 * or one that is not that entry (`checkpoint`: moved by hand); it passed entries younger than
 * the retention (`pruned-early`: the prune never does). The seal, with AUDIT_KEY here: the head
 * carries none (`unsealed`), or one that does not match it (`seal`).
 */
export type AuditProblem =
  'changed' | 'removed' | 'reordered' | 'checkpoint' | 'pruned-early' | 'unsealed' | 'seal';

export interface AuditVerdict {
  ok: boolean;
  /** Entries checked (those kept since the last prune). */
  entries: number;
  /** The newest entry's seq and hash, worth keeping elsewhere (see docs/operations.md). */
  head: { seq: number; hash: string };
  /**
   * The prune's checkpoint: the last entry removed (seq 0: none yet) and when it was stamped
   * (ISO 8601; null when nothing was pruned, or its record does not hold).
   */
  checkpoint: { seq: number; hash: string; lastPrunedAt: string | null };
  /** The head's seal (src/audit/seal.ts) and the head's seq when it was started. */
  seal: { state: SealState; since: number | null };
  firstBad?: { seq: number; problem: AuditProblem };
}

/** What the retention check needs: AUDIT_RETENTION_DAYS and this process's clock (ms). */
export interface RetentionCheck {
  retentionDays: number;
  now: number;
}

/**
 * Clock skew allowed between the instance that pruned (its own clock sets the cut-off), the
 * database (which stamps entries) and the verifier: far below any retention (90 days at least).
 */
const clockSlackMs = 60 * 60_000;

type Walk = {
  entries: number;
  last: { seq: number; hash: string };
  bad?: { seq: number; problem: AuditProblem };
};

/**
 * Walks the entries after `from` up to seq `toSeq`: each must come next in seq, hash to its
 * stored hash, and name the hash of the entry before it. Stops at the first that fails.
 */
export async function walkAuditChain(
  db: Kysely<Database>,
  from: { seq: number; hash: string },
  toSeq: number,
): Promise<Walk> {
  let last = from;
  let entries = 0;
  for (;;) {
    const rows = (
      await db
        .selectFrom('audit_log')
        .selectAll()
        .where('seq', '>', last.seq)
        .where('seq', '<=', toSeq)
        .orderBy('seq')
        .limit(auditPageMax)
        .execute()
    ).map(readRow);
    for (const row of rows) {
      const bad = (problem: AuditProblem): Walk => ({
        entries,
        last,
        bad: { seq: row.seq, problem },
      });
      if (row.seq !== last.seq + 1)
        return { entries, last, bad: { seq: last.seq + 1, problem: 'removed' } };
      if (auditEntryHash(fieldsOf(row), row.prev_hash) !== row.hash) return bad('changed');
      if (row.prev_hash !== last.hash) return bad('reordered');
      entries += 1;
      last = { seq: row.seq, hash: row.hash };
    }
    if (rows.length < auditPageMax) return { entries, last };
  }
}

/**
 * Walks the chain from the prune's checkpoint to the head row (entries appended meanwhile are
 * left for the next walk), and the head row must name the last entry; then checks the
 * checkpoint's record and age against the retention, and the seal when there is a key here.
 * The first problem is named, and the walk stops there.
 */
export async function verifyAuditLog(
  db: Kysely<Database>,
  retention: RetentionCheck,
): Promise<AuditVerdict> {
  const headRow = await db
    .selectFrom('audit_head')
    .selectAll()
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  const head = { seq: Number(headRow.seq), hash: headRow.hash };
  const checkpointSeq = Number(headRow.pruned_seq);
  const prunedAt =
    checkpointSeq === 0 ? null : checkpointTime(headRow.pruned_entry, headRow.pruned_hash);
  const seal = sealState(headRow);
  const walk = await walkAuditChain(
    db,
    { seq: checkpointSeq, hash: headRow.pruned_hash },
    head.seq,
  );
  const verdict = (firstBad?: AuditVerdict['firstBad']): AuditVerdict => ({
    ok: firstBad === undefined,
    entries: walk.entries,
    head,
    checkpoint: {
      seq: checkpointSeq,
      hash: headRow.pruned_hash,
      lastPrunedAt: prunedAt === null ? null : new Date(prunedAt).toISOString(),
    },
    seal: {
      state: seal,
      since: headRow.sealed_since === null ? null : Number(headRow.sealed_since),
    },
    ...(firstBad !== undefined && { firstBad }),
  });
  if (walk.bad !== undefined) return verdict(walk.bad);
  // The head names the newest entry: entries removed from the end show here.
  if (walk.last.seq !== head.seq || walk.last.hash !== head.hash)
    return verdict({ seq: walk.last.seq + 1, problem: 'removed' });
  if (checkpointSeq > 0 && prunedAt === null)
    return verdict({ seq: checkpointSeq, problem: 'checkpoint' });
  const youngest = retention.now - retention.retentionDays * 86_400_000 + clockSlackMs;
  if (prunedAt !== null && prunedAt > youngest)
    return verdict({ seq: checkpointSeq, problem: 'pruned-early' });
  if (seal === 'missing') return verdict({ seq: head.seq, problem: 'unsealed' });
  if (seal === 'broken') return verdict({ seq: head.seq, problem: 'seal' });
  return verdict();
}
