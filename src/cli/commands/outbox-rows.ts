import type { LeasedRecord, LeasedState } from '../../outbox/leased-store.js';
import type { CliContext } from '../context.js';
import { CliError } from '../prompt.js';
import { printable } from './list.js';

/*
 * What `mail list` and `webhooks list` (and their `retry`) share: both outboxes are leased
 * outboxes (src/outbox/), listed and named the same way.
 */

export const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

/** `--state` (one of the outbox's `states`) and `--limit` (50 unless given), checked. */
export function readListOptions<State extends string>(
  values: { state?: string; limit?: string },
  states: readonly State[],
): { state?: State; limit: number } {
  const state = values.state;
  if (state !== undefined && !states.includes(state as State))
    throw new CliError(`--state must be one of ${states.join(', ')}`, 2);
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new CliError('--limit must be a whole number from 1 to 10000', 2);
  return { limit, ...(state !== undefined && { state: state as State }) };
}

/**
 * A row's id as typed: ids are UUIDs, so anything else names no row and is not echoed (it
 * might be a secret). `noun` names it in the refusals ("the mail id", "no mail has that id").
 */
export function requireRowId(
  raw: string | undefined,
  noun: { short: string; long: string },
): string {
  if (raw === undefined || raw === '') throw new CliError(`the ${noun.short} id is required`, 2);
  if (!/^[0-9a-f-]{36}$/i.test(raw)) throw new CliError(`no ${noun.long} has that id`, 1);
  return raw.toLowerCase();
}

/**
 * The rows as JSON (`json`), or one tab-separated line each: id, state, what and where it is
 * for (`describe`), created, attempts and the last error; `empty` when there are none.
 */
export function printRows<Row extends LeasedRecord<LeasedState>>(
  context: CliContext,
  rows: readonly Row[],
  print: {
    json: boolean;
    asJson(row: Row): object;
    describe(row: Row): [what: string, where: string];
    empty: string;
  },
): void {
  if (print.json) {
    context.out(JSON.stringify(rows.map(print.asJson), null, 2));
    return;
  }
  if (rows.length === 0) {
    context.out(print.empty);
    return;
  }
  for (const row of rows) {
    const [what, where] = print.describe(row);
    const error = row.lastError === null ? '' : `\t${printable(row.lastError)}`;
    context.out(
      `${row.id}\t${row.state}\t${what}\t${printable(where)}\t${iso(row.createdAt)}\t${row.attempts} attempt${row.attempts === 1 ? '' : 's'}${error}`,
    );
  }
}
