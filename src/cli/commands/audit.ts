import {
  exportAudit,
  sealAudit,
  verifyAudit,
  type AuditVerdict,
} from '../../operator/operations.js';
import { operatorPorts, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';

export const verifyHelp = `Usage: gatehouse audit verify

Walks the audit log from its oldest kept entry to its newest: each entry must hash to its
stored hash and name the hash of the one before it, with no seq missing, and the chain's head
must name the newest entry. The prune's checkpoint must record the entry it passed, stamped
longer ago than AUDIT_RETENTION_DAYS (the prune removes nothing younger); with AUDIT_KEY set,
the head and checkpoint must carry a seal made with it. Exit 0 and three lines: the head (seq
and hash: keep it elsewhere to prove later that nothing was rewritten), the checkpoint (its seq
and when the last pruned entry was stamped) and the seal; exit 1 naming what does not hold.`;

export const sealHelp = `Usage: gatehouse audit seal

Seals the audit log's head and checkpoint with AUDIT_KEY, as they are now, once the chain
verifies in every other way: run it once after setting AUDIT_KEY on every instance and here,
and again only after finding out why \`audit verify\` said the seal is broken. Every append and
prune then renews the seal; nothing in the database can. Prints the seq it was sealed at (keep
it with the head: a later seal start shows the chain was sealed again).`;

export const exportHelp = `Usage: gatehouse audit export [--since TIME]

Writes the audit log as JSON lines, oldest first: seq, at, type, userId, actor, ip, device,
detail, prevHash, hash. --since takes an ISO 8601 time (2026-11-01 or 2026-11-01T12:00:00Z):
only entries at or after it.`;

/** What went wrong, in words, as `audit log …: …`. */
function problemOf(verdict: AuditVerdict, retentionDays: number): string {
  const bad = verdict.firstBad;
  if (bad === undefined) return '';
  const { seq } = bad;
  const before = `${verdict.entries} entries before it are whole`;
  switch (bad.problem) {
    case 'changed':
      return `audit log broken: entry ${seq} was changed (its fields no longer match its hash); ${before}`;
    case 'removed':
      return `audit log broken: entry ${seq} was removed; ${before}`;
    case 'reordered':
      return `audit log broken: entry ${seq} does not follow the entry before it (reordered, or entries before it removed); ${before}`;
    case 'checkpoint':
      return `audit log cut: the checkpoint (seq ${seq}) holds no record of the entry it passed, or one that is not that entry: it was moved in the database, not by the prune (a checkpoint left by a prune before this version is recorded by the next prune)`;
    case 'pruned-early':
      return `audit log cut short: the checkpoint (seq ${seq}) passed entries younger than AUDIT_RETENTION_DAYS (${retentionDays}): its last one was stamped ${verdict.checkpoint.lastPrunedAt ?? '?'}, and the prune removes nothing that young; entries were deleted in the database (if AUDIT_RETENTION_DAYS was raised since that prune, verify with the old value: AUDIT_RETENTION_DAYS=<old> gatehouse audit verify)`;
    case 'unsealed':
      return 'audit log not sealed: AUDIT_KEY is set but the head carries no seal; run `gatehouse audit seal` once (if it was sealed before, the seal was removed in the database)';
    case 'seal':
      return 'audit log seal broken: the head or checkpoint was moved by something without AUDIT_KEY: by hand in the database, or by an instance or CLI run without AUDIT_KEY (or with a key not listed here); once you know which, `gatehouse audit seal` seals the chain as it is';
  }
}

function sealLine(verdict: AuditVerdict): string {
  const since = verdict.seal.since === null ? '' : `, since seq ${verdict.seal.since}`;
  switch (verdict.seal.state) {
    case 'valid':
      return `seal: whole under AUDIT_KEY${since}`;
    case 'unchecked':
      return `seal: not checked (sealed${since}, but AUDIT_KEY is not set here)`;
    case 'off':
      return 'seal: none (AUDIT_KEY is not set)';
    default:
      return `seal: ${verdict.seal.state}`;
  }
}

export async function verify(context: CliContext): Promise<void> {
  const retentionDays = context.config.auditRetentionDays;
  const verdict = await verifyAudit(operatorPorts(context), { retentionDays });
  if (verdict.firstBad !== undefined) throw new CliError(problemOf(verdict, retentionDays), 1);
  const { checkpoint } = verdict;
  context.out(
    `audit log whole: ${verdict.entries} entries; head seq ${verdict.head.seq} hash ${verdict.head.hash}`,
  );
  context.out(
    checkpoint.seq === 0
      ? 'checkpoint: seq 0 (nothing pruned yet)'
      : `checkpoint: seq ${checkpoint.seq}, its last pruned entry stamped ${checkpoint.lastPrunedAt ?? '?'} (AUDIT_RETENTION_DAYS ${retentionDays})`,
  );
  context.out(sealLine(verdict));
}

export async function seal(context: CliContext): Promise<void> {
  const retentionDays = context.config.auditRetentionDays;
  const outcome = await sealAudit(operatorPorts(context), { retentionDays });
  if ('sealed' in outcome) {
    const was =
      outcome.was === 'valid'
        ? 'it was sealed already; the seal starts again here'
        : outcome.was === 'broken'
          ? 'the seal it had did not match'
          : 'it had none';
    context.out(`audit log sealed at seq ${outcome.sealed} (${was})`);
    return;
  }
  if (outcome.refused === 'no-key')
    throw new CliError(
      'AUDIT_KEY is not set: set it as the service has it (openssl rand -base64 33 makes one)',
    );
  if (outcome.refused === 'moved')
    throw new CliError('a prune moved the checkpoint meanwhile: run `gatehouse audit seal` again');
  throw new CliError(
    `${problemOf(outcome.verdict, retentionDays)}; a seal vouches only for a whole chain`,
    1,
  );
}

/** An ISO 8601 date or time as ms, or a usage error (2). */
function sinceOf(raw: string | boolean | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms))
    throw new CliError(
      `--since takes an ISO 8601 time, like 2026-11-01T12:00:00Z\n\n${exportHelp}`,
      2,
    );
  return ms;
}

export async function exportLines(
  context: CliContext,
  values: Record<string, string | boolean | undefined>,
): Promise<void> {
  const since = sinceOf(values.since);
  for await (const entry of exportAudit(context, { since })) context.out(JSON.stringify(entry));
}
