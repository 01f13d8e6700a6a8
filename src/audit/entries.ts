import type { Kysely, Selectable } from 'kysely';
import type { AuditLogTable, Database } from '../db/schema.js';

/** An audit entry as export and the admin API show it. */
export interface AuditEntry {
  seq: number;
  /** ISO 8601, milliseconds. */
  at: string;
  type: string;
  userId: string | null;
  actor: string | null;
  ip: string;
  device: string;
  detail: Record<string, unknown> | null;
  prevHash: string;
  hash: string;
}

/** Entries per page at most. */
export const auditPageMax = 1000;

/** A stored row with its numbers as numbers (PostgreSQL returns bigint as text). */
export function readRow(row: Selectable<AuditLogTable>): Selectable<AuditLogTable> {
  return { ...row, seq: Number(row.seq), at: Number(row.at) };
}

function shown(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    seq: row.seq,
    at: new Date(row.at).toISOString(),
    type: row.type,
    userId: row.user_id,
    actor: row.actor,
    ip: row.ip,
    device: row.device,
    detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/**
 * One page of the log in the chain's order: entries after `afterSeq` (the cursor) stamped at
 * or after `since` (ms). `nextCursor` is the last entry's seq when the page is full.
 */
export async function listAuditEntries(
  db: Kysely<Database>,
  page: { since?: number | undefined; afterSeq?: number | undefined; limit?: number | undefined },
): Promise<{ entries: AuditEntry[]; nextCursor: number | null }> {
  const limit = Math.min(Math.max(page.limit ?? auditPageMax, 1), auditPageMax);
  let query = db
    .selectFrom('audit_log')
    .selectAll()
    .where('seq', '>', page.afterSeq ?? 0)
    .orderBy('seq')
    .limit(limit);
  if (page.since !== undefined) query = query.where('at', '>=', page.since);
  const rows = (await query.execute()).map(readRow);
  const last = rows.at(-1);
  return {
    entries: rows.map(shown),
    nextCursor: rows.length === limit && last !== undefined ? last.seq : null,
  };
}

/** Every entry from `since` on, page by page, in the chain's order (for `audit export`). */
export async function* auditEntriesSince(
  db: Kysely<Database>,
  since: number | undefined,
): AsyncGenerator<AuditEntry> {
  let afterSeq = 0;
  for (;;) {
    const page = await listAuditEntries(db, { since, afterSeq });
    yield* page.entries;
    if (page.nextCursor === null) return;
    afterSeq = page.nextCursor;
  }
}
