import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { canSealAudit, sealOf, sealState, type SealState } from './seal.js';
import {
  verifyAuditLog,
  walkAuditChain,
  type AuditVerdict,
  type RetentionCheck,
} from './verify-chain.js';

export type SealOutcome =
  /** Sealed at the head's seq; `was` is what the seal said before. */
  | { sealed: number; was: SealState }
  /** No AUDIT_KEY in this process. */
  | { refused: 'no-key' }
  /** The chain itself is broken: a seal cannot vouch for it. */
  | { refused: 'broken'; verdict: AuditVerdict }
  /** A prune moved the checkpoint while the chain was walked: try again. */
  | { refused: 'moved' };

/**
 * Starts the seal over the chain as it is now (`gatehouse audit seal`): once after AUDIT_KEY is
 * first set, or after a broken seal was looked into. Only a chain that verifies in every other
 * way is sealed. The walk runs without a lock; then, with the head locked, the entries appended
 * meanwhile are walked too (a few), so appends wait only that long.
 */
export async function sealAuditChain(
  db: Kysely<Database>,
  retention: RetentionCheck,
): Promise<SealOutcome> {
  if (!canSealAudit()) return { refused: 'no-key' };
  const verdict = await verifyAuditLog(db, retention);
  const problem = verdict.firstBad?.problem;
  if (problem !== undefined && problem !== 'unsealed' && problem !== 'seal')
    return { refused: 'broken', verdict };
  return db.transaction().execute(async (trx): Promise<SealOutcome> => {
    const head = await trx
      .updateTable('audit_head')
      .set((eb) => ({ seq: eb.ref('seq') }))
      .where('id', '=', 1)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (Number(head.pruned_seq) !== verdict.checkpoint.seq) return { refused: 'moved' };
    const walk = await walkAuditChain(trx, verdict.head, Number(head.seq));
    if (
      walk.bad !== undefined ||
      walk.last.seq !== Number(head.seq) ||
      walk.last.hash !== head.hash
    )
      return { refused: 'broken', verdict: await verifyAuditLog(trx, retention) };
    const since = Number(head.seq);
    await trx
      .updateTable('audit_head')
      .set({ seal: sealOf(head, since), sealed_since: since })
      .where('id', '=', 1)
      .execute();
    return { sealed: since, was: sealState(head) };
  });
}

/** What start-up says about the seal when it needs the operator (`cli`: how to run the CLI). */
export async function auditSealNote(
  db: Kysely<Database>,
  cli: string,
): Promise<string | undefined> {
  const head = await db.selectFrom('audit_head').selectAll().executeTakeFirst();
  if (head === undefined) return undefined;
  switch (sealState(head)) {
    case 'unchecked':
      return 'the audit log is sealed under AUDIT_KEY, but AUDIT_KEY is not set here: each entry this instance appends breaks the seal; set AUDIT_KEY as the other instances and the CLI have it';
    case 'missing':
      return `AUDIT_KEY is set but the audit log is not sealed yet: run \`${cli} audit seal\` once (it checks the chain first); until then \`audit verify\` fails`;
    case 'broken':
      return `the audit log's seal does not match its head and checkpoint: \`${cli} audit verify\` says more; it stays broken until \`${cli} audit seal\``;
    default:
      return undefined;
  }
}
