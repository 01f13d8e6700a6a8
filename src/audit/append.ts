import { sql, type Kysely } from 'kysely';
import { databaseNow } from '../db/clock.js';
import type { Database } from '../db/schema.js';
import { auditEntryHash, type AuditFields } from './entry-hash.js';
import { nextSeal } from './seal.js';

/** An event as the audit log keeps it; the chain gives it its time (`at`). */
export type NewAuditEntry = Omit<AuditFields, 'at'>;

/**
 * Appends one entry after the chain's head, in `db`'s transaction when it is one (so the entry
 * commits with the change it records, or not at all), else in a transaction of its own.
 *
 * The head row is updated first: on PostgreSQL that row lock is held until the transaction
 * ends, so every instance's appends take their turn and the chain has one order, no forks; on
 * SQLite the statement takes the one writer. The same statement reads the database's clock, so
 * `at` follows the chain's order across instances. A whole seal is renewed over the new head
 * (src/audit/seal.ts). Answers the entry's `seq` and `at`.
 */
export function appendAuditEntry(
  db: Kysely<Database>,
  entry: NewAuditEntry,
): Promise<{ seq: number; at: number }> {
  if (db.isTransaction) return appendIn(db, entry);
  return db.transaction().execute((trx) => appendIn(trx, entry));
}

async function appendIn(
  trx: Kysely<Database>,
  entry: NewAuditEntry,
): Promise<{ seq: number; at: number }> {
  const head = await trx
    .updateTable('audit_head')
    .set({ seq: sql`seq + 1` })
    .where('id', '=', 1)
    .returning([
      'seq',
      'hash',
      'pruned_seq',
      'pruned_hash',
      'seal',
      'sealed_since',
      databaseNow(trx).as('now'),
    ])
    .executeTakeFirstOrThrow();
  const seq = Number(head.seq);
  const at = Number(head.now);
  const fields = { ...entry, at };
  const hash = auditEntryHash(fields, head.hash);
  await trx
    .insertInto('audit_log')
    .values({
      seq,
      at,
      type: entry.type,
      user_id: entry.userId,
      actor: entry.actor,
      ip: entry.ip,
      device: entry.device,
      detail: entry.detail,
      prev_hash: head.hash,
      hash,
    })
    .execute();
  // The seal read here covered the head before this append (seq - 1).
  const sealed = nextSeal({ ...head, seq: seq - 1 }, { ...head, seq, hash });
  await trx
    .updateTable('audit_head')
    .set({ hash, ...sealed })
    .where('id', '=', 1)
    .execute();
  return { seq, at };
}
