import { auditEntriesSince, listAuditEntries, type AuditEntry } from '../audit/entries.js';
import { verifyAuditLog, type AuditVerdict } from '../audit/verify.js';
import type { OperatorPorts } from './actor.js';

export type { AuditEntry, AuditVerdict };

/**
 * Walks the whole audit chain: `{ok, entries, head, firstBad?}`, the first entry changed,
 * removed or reordered named by its seq (`gatehouse audit verify`, the admin API's verify).
 */
export function verifyAudit(ports: Pick<OperatorPorts, 'db'>): Promise<AuditVerdict> {
  return verifyAuditLog(ports.db);
}

/** Every entry stamped at or after `since` (ms), in the chain's order (`audit export`). */
export function exportAudit(
  ports: Pick<OperatorPorts, 'db'>,
  request: { since?: number | undefined },
): AsyncGenerator<AuditEntry> {
  return auditEntriesSince(ports.db, request.since);
}

/** One page of entries after the cursor (a seq), for a caller that pages (the admin API). */
export function listAudit(
  ports: Pick<OperatorPorts, 'db'>,
  request: { since?: number | undefined; cursor?: number | undefined; limit?: number | undefined },
) {
  return listAuditEntries(ports.db, {
    since: request.since,
    afterSeq: request.cursor,
    limit: request.limit,
  });
}
