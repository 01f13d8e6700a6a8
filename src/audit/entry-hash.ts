import { createHash } from 'node:crypto';

/** What an audit entry says, as it is hashed (its `seq` is its place, which the links prove). */
export interface AuditFields {
  at: number;
  type: string;
  /** The user it is about; null for none (an operator's action on no user). */
  userId: string | null;
  /** Who did it when not the user: an operator's label. Never a secret. */
  actor: string | null;
  ip: string;
  device: string;
  /** The detail's JSON text exactly as stored, or null. */
  detail: string | null;
}

/** Bumped if the encoding ever changes; part of every hash, so old and new never mix silently. */
const encodingVersion = 1;

/**
 * SHA-256 (hex) over the canonical encoding of an entry and the hash of the entry before it:
 * a JSON array in a fixed order of strings, numbers and nulls, which JSON.stringify writes one
 * way only. Changing any field, or the entry the link points to, changes the hash.
 */
export function auditEntryHash(fields: AuditFields, prevHash: string): string {
  const canonical = JSON.stringify([
    encodingVersion,
    fields.at,
    fields.type,
    fields.userId,
    fields.actor,
    fields.ip,
    fields.device,
    fields.detail,
    prevHash,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}
