import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { readHash, type FirebaseScryptParams } from '../../users/legacy-hashes.cjs';
import { auditOperatorAction, type Actor, type OperatorPorts } from '../actor.js';
import type { LineProblem } from './import-line.js';
import type { ImportRecord } from './import-record.js';
import { existingRows, writeBatch } from './import-writes.js';

/** One line of the source: a record, or what is wrong with it. */
export type SourceLine = { line: number } & ({ record: ImportRecord } | { problem: LineProblem });

export interface ImportOptions {
  /** Report only: the import runs, and its transaction is taken back. */
  check: boolean;
  actor: Actor;
  /** For imported Firebase hashes (`IMPORT_FIREBASE_SCRYPT`). */
  firebase: FirebaseScryptParams | null;
  /** The issuer of a configured provider id, or null when no such provider is configured. */
  issuerOf(provider: string): string | null;
  /** Told after each batch how many lines were read (progress on a terminal). */
  progress?: (lines: number) => void;
}

export interface ImportReport {
  lines: number;
  /** Users written (or, with `check`, that would be). */
  added: number;
  /** Users already here with the same id and address: left as they are. */
  unchanged: number;
  identities: number;
  passkeys: number;
  /** Hashes by format, of the users added. */
  hashFormats: Record<string, number>;
  /** The first problems, by line; `moreProblems` counts the rest. */
  problems: Array<{ line: number } & LineProblem>;
  moreProblems: number;
  /** True when the users were written; false with `check` or any problem (nothing written). */
  written: boolean;
}

const batchSize = 500;
const problemsShown = 100;

/** Thrown inside the transaction to take every write back when a problem was found. */
class TakenBack extends Error {}

/**
 * Imports users line by line in batches, as one transaction: a file imports whole or not at
 * all. Each line is checked (its fields, its hash's format and cost, its providers), then each
 * batch against the store, where this transaction has written the batches before it: an id or
 * address, identity or passkey that belongs to someone else, or to an earlier line, is a
 * problem naming the line; a user already here with the same id and address is left as it is,
 * so a second run of a file changes nothing. Every line is read, so one run reports every
 * problem; with any, or with `check`, the transaction is taken back. Memory holds one batch:
 * the store, not the process, remembers what the file said before.
 */
export async function importUsers(
  ports: OperatorPorts,
  source: AsyncIterable<SourceLine>,
  options: ImportOptions,
): Promise<ImportReport> {
  const report: ImportReport = {
    lines: 0,
    added: 0,
    unchanged: 0,
    identities: 0,
    passkeys: 0,
    hashFormats: {},
    problems: [],
    moreProblems: 0,
    written: false,
  };
  const at = ports.now();
  try {
    await ports.db.transaction().execute(async (trx) => {
      let batch: Array<{ line: number; record: ImportRecord }> = [];
      const flush = async () => {
        await importBatch(trx, batch, at, options, report);
        batch = [];
        options.progress?.(report.lines);
      };
      for await (const item of source) {
        report.lines = item.line;
        if ('problem' in item) problem(report, item.line, item.problem);
        else {
          const found = recordProblem(item.record, options);
          if (found === null) batch.push(item);
          else problem(report, item.line, found);
        }
        if (batch.length >= batchSize) await flush();
      }
      await flush();
      if (options.check || hasProblems(report)) throw new TakenBack();
      if (report.added > 0)
        await auditOperatorAction(trx, options.actor, 'users_imported', null, {
          added: report.added,
          unchanged: report.unchanged,
        });
    });
    report.written = true;
  } catch (error) {
    if (!(error instanceof TakenBack)) throw error;
  }
  return report;
}

const hasProblems = (report: ImportReport) => report.problems.length > 0 || report.moreProblems > 0;

function problem(report: ImportReport, line: number, found: LineProblem): void {
  if (report.problems.length < problemsShown) report.problems.push({ line, ...found });
  else report.moreProblems += 1;
}

/** What is wrong with a record on its own: its hash, its providers. */
function recordProblem(record: ImportRecord, options: ImportOptions): LineProblem | null {
  if (record.passwordHash !== null) {
    const reading = readHash(record.passwordHash, options.firebase);
    if (!reading.ok) return { field: 'passwordHash', message: reading.problem };
  }
  for (const [index, identity] of record.identities.entries()) {
    if (options.issuerOf(identity.provider) === null)
      return {
        field: `identities.${index}.provider`,
        message: `names ${identity.provider}, which is not configured here (AUTH_${identity.provider.toUpperCase().replace(/-/g, '_')}_ID, docs/configuration.md#identity-providers)`,
      };
  }
  return null;
}

/** A batch checked against the file so far and the store, then written (taken back at the end if need be). */
async function importBatch(
  db: Kysely<Database>,
  batch: Array<{ line: number; record: ImportRecord }>,
  at: number,
  options: ImportOptions,
  report: ImportReport,
): Promise<void> {
  if (batch.length === 0) return;
  const identityKey = (provider: string, subject: string) =>
    `${provider} ${options.issuerOf(provider) ?? ''} ${subject}`;
  const existing = await existingRows(
    db,
    batch.map((item) => item.record),
    identityKey,
  );
  // The lines before, in this batch; earlier batches are in the store (this transaction's).
  const inBatch = new Map<string, number>();
  const fresh: ImportRecord[] = [];
  for (const { record, line } of batch) {
    const byId = existing.usersById.get(record.id);
    if (byId !== undefined && byId.email === record.email && byId.importedAt !== at) {
      report.unchanged += 1;
      continue;
    }
    const found =
      repeatedInBatch(inBatch, record, line, identityKey) ??
      heldElsewhere(existing, record, at, identityKey);
    if (found !== null) problem(report, line, found);
    else fresh.push(record);
  }
  for (const record of fresh) {
    report.added += 1;
    report.identities += record.identities.length;
    report.passkeys += record.passkeys.length;
    const format =
      record.passwordHash === null
        ? 'none'
        : ((readHash(record.passwordHash, options.firebase) as { format?: string }).format ?? '');
    report.hashFormats[format] = (report.hashFormats[format] ?? 0) + 1;
  }
  await writeBatch(db, fresh, at, options.issuerOf);
}

/** The keys a record claims: its id, address, identities and passkeys, each with its field. */
function keysOf(
  record: ImportRecord,
  identityKey: (provider: string, subject: string) => string,
): Array<{ field: string; key: string; shown: string }> {
  return [
    { field: 'id', key: `id ${record.id}`, shown: `id ${record.id}` },
    { field: 'email', key: `email ${record.email}`, shown: record.email },
    ...record.identities.map((identity, index) => ({
      field: `identities.${index}`,
      key: `identity ${identityKey(identity.provider, identity.subject)}`,
      shown: `${identity.provider} identity ${identity.subject}`,
    })),
    ...record.passkeys.map((passkey, index) => ({
      field: `passkeys.${index}.credentialId`,
      key: `passkey ${passkey.credentialId}`,
      shown: 'this passkey',
    })),
  ];
}

/** The record's first key an earlier line of its batch has, as a problem; else its keys are noted. */
function repeatedInBatch(
  inBatch: Map<string, number>,
  record: ImportRecord,
  line: number,
  identityKey: (provider: string, subject: string) => string,
): LineProblem | null {
  const keys = keysOf(record, identityKey);
  for (const { field, key, shown } of keys) {
    const earlier = inBatch.get(key);
    if (earlier !== undefined) return { field, message: `${shown} is on line ${earlier} too` };
  }
  for (const { key } of keys) inBatch.set(key, line);
  return null;
}

/**
 * What of the record the store holds already, as a problem: another user's here, or, written by
 * this import (`importedAt` is now), an earlier line's.
 */
function heldElsewhere(
  existing: Awaited<ReturnType<typeof existingRows>>,
  record: ImportRecord,
  at: number,
  identityKey: (provider: string, subject: string) => string,
): LineProblem | null {
  const owner = (importedAt: number | null, here: string, shown: string) =>
    importedAt === at ? `${shown} is on an earlier line too` : here;
  const byId = existing.usersById.get(record.id);
  const byEmail = existing.usersByEmail.get(record.email);
  const others = [
    {
      field: 'id',
      holder: byId === undefined ? undefined : byId.importedAt,
      here: `belongs to another user here (${byId?.email})`,
      shown: `id ${record.id}`,
    },
    {
      field: 'email',
      holder: byEmail === undefined ? undefined : byEmail.importedAt,
      here: `belongs to another user here (id ${byEmail?.id})`,
      shown: record.email,
    },
    ...record.identities.map((identity, index) => ({
      field: `identities.${index}`,
      holder: existing.identities.get(identityKey(identity.provider, identity.subject)),
      here: 'is linked to another user here',
      shown: `${identity.provider} identity ${identity.subject}`,
    })),
    ...record.passkeys.map((passkey, index) => ({
      field: `passkeys.${index}.credentialId`,
      holder: existing.passkeys.get(passkey.credentialId),
      here: 'belongs to another user here',
      shown: 'this passkey',
    })),
  ];
  for (const { field, holder, here, shown } of others)
    if (holder !== undefined) return { field, message: owner(holder, here, shown) };
  return null;
}
