import { exportAudit, verifyAudit } from '../../operator/operations.js';
import type { CliContext } from '../context.js';
import { CliError } from '../prompt.js';

export const verifyHelp = `Usage: gatehouse audit verify

Walks the audit log from its oldest kept entry to its newest: each entry must hash to its
stored hash and name the hash of the one before it, with no seq missing, and the chain's head
must name the newest entry. Exit 0 and the head (seq and hash: keep it elsewhere to prove later
that nothing was rewritten) when the log is whole; exit 1 naming the first entry changed,
removed or reordered.`;

export const exportHelp = `Usage: gatehouse audit export [--since TIME]

Writes the audit log as JSON lines, oldest first: seq, at, type, userId, actor, ip, device,
detail, prevHash, hash. --since takes an ISO 8601 time (2026-11-01 or 2026-11-01T12:00:00Z):
only entries at or after it.`;

const problems = {
  changed: 'was changed (its fields no longer match its hash)',
  removed: 'was removed',
  reordered: 'does not follow the entry before it (reordered, or entries before it removed)',
} as const;

export async function verify(context: CliContext): Promise<void> {
  const verdict = await verifyAudit(context);
  if (verdict.firstBad !== undefined) {
    const { seq, problem } = verdict.firstBad;
    throw new CliError(
      `audit log broken: entry ${seq} ${problems[problem]}; ${verdict.entries} entries before it are whole`,
      1,
    );
  }
  context.out(
    `audit log whole: ${verdict.entries} entries; head seq ${verdict.head.seq} hash ${verdict.head.hash}`,
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
