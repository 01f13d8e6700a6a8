import type { Selectable } from 'kysely';
import type { AuditLogTable } from '../db/schema.js';
import { auditEntryHash, type AuditFields } from './entry-hash.js';

/** A stored row's fields as its hash takes them. */
export function fieldsOf(row: Selectable<AuditLogTable>): AuditFields {
  return {
    at: Number(row.at),
    type: row.type,
    userId: row.user_id,
    actor: row.actor,
    ip: row.ip,
    device: row.device,
    detail: row.detail,
  };
}

/**
 * The last entry a prune removed, as the checkpoint keeps it (`audit_head.pruned_entry`): its
 * fields and the hash it followed, so it can be hashed again. Its time is then the chain's own
 * word, not a number anyone could write beside the checkpoint.
 */
export function checkpointRecord(row: Selectable<AuditLogTable>): string {
  return JSON.stringify({ ...fieldsOf(row), prevHash: row.prev_hash });
}

const isText = (value: unknown): value is string => typeof value === 'string';
const isTextOrNull = (value: unknown): value is string | null => value === null || isText(value);

function parsed(record: string): (AuditFields & { prevHash: string }) | null {
  let value: unknown;
  try {
    value = JSON.parse(record);
  } catch {
    // Not JSON: not a record the prune wrote.
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Record<string, unknown>;
  if (typeof r.at !== 'number' || !isText(r.type) || !isText(r.ip) || !isText(r.device))
    return null;
  if (!isTextOrNull(r.userId) || !isTextOrNull(r.actor) || !isTextOrNull(r.detail)) return null;
  if (!isText(r.prevHash)) return null;
  return {
    at: r.at,
    type: r.type,
    userId: r.userId,
    actor: r.actor,
    ip: r.ip,
    device: r.device,
    detail: r.detail,
    prevHash: r.prevHash,
  };
}

/**
 * When the entry the checkpoint passed was stamped (ms), read from its record: only when the
 * record hashes to the checkpoint's hash, the one the oldest kept entry links to. Null: no
 * record, or one that is not that entry's (the checkpoint was moved by hand).
 */
export function checkpointTime(record: string | null, prunedHash: string): number | null {
  const entry = record === null ? null : parsed(record);
  if (entry === null) return null;
  const { prevHash, ...fields } = entry;
  return auditEntryHash(fields, prevHash) === prunedHash ? entry.at : null;
}
