import { auditEntriesSince, listAuditEntries, type AuditEntry } from '../audit/entries.js';
import { sealAuditChain, type SealOutcome } from '../audit/reseal.js';
import { verifyAuditLog, type AuditVerdict } from '../audit/verify-chain.js';
import type { OperatorPorts } from './actor.js';

export type { AuditEntry, AuditVerdict, SealOutcome };

/** AUDIT_RETENTION_DAYS, as the caller's configuration has it. */
interface Retention {
  retentionDays: number;
}

/**
 * Walks the whole audit chain: `{ok, entries, head, checkpoint, seal, firstBad?}`, the first
 * entry changed, removed or reordered, a checkpoint moved or past the retention, or a seal that
 * does not hold, named (`gatehouse audit verify`, the admin API's verify).
 */
export function verifyAudit(
  ports: Pick<OperatorPorts, 'db' | 'now'>,
  request: Retention,
): Promise<AuditVerdict> {
  return verifyAuditLog(ports.db, { retentionDays: request.retentionDays, now: ports.now() });
}

/** Seals the chain as it is, once it verifies but for its seal (`gatehouse audit seal`). */
export function sealAudit(
  ports: Pick<OperatorPorts, 'db' | 'now'>,
  request: Retention,
): Promise<SealOutcome> {
  return sealAuditChain(ports.db, { retentionDays: request.retentionDays, now: ports.now() });
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
