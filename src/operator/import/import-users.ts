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
  /** Read and report only: nothing is written. */
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
 * batch against the file so far and the store: an id or address, identity or passkey that
 * belongs to someone else is a problem naming the line; a user already here with the same id
 * and address is left as it is, so a second run of a file changes nothing. Past the first
 * problem nothing more is written, but every line is still read, so one run reports them all.
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
  const run = async (db: Kysely<Database>) => {
    const seen = new SeenInFile();
    const at = ports.now();
    let batch: Array<{ line: number; record: ImportRecord }> = [];
    const flush = async () => {
      await importBatch(db, batch, at, options, report, seen);
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
    if (!options.check && report.added > 0 && !hasProblems(report))
      await auditOperatorAction(db, options.actor, 'users_imported', null, {
        added: report.added,
        unchanged: report.unchanged,
      });
  };
  if (options.check) {
    await run(ports.db);
    return report;
  }
  try {
    await ports.db.transaction().execute(async (trx) => {
      await run(trx);
      if (hasProblems(report)) throw new TakenBack();
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

/** Ids, addresses, identities and passkeys of the lines read so far. */
class SeenInFile {
  private readonly keys = new Map<string, number>();
  /** The earlier line that has `key`, or undefined (and `key` is now this line's). */
  claim(key: string, line: number): number | undefined {
    const earlier = this.keys.get(key);
    if (earlier === undefined) this.keys.set(key, line);
    return earlier;
  }
}

/** A batch checked against the file so far and the store, then written unless a problem was found. */
async function importBatch(
  db: Kysely<Database>,
  batch: Array<{ line: number; record: ImportRecord }>,
  at: number,
  options: ImportOptions,
  report: ImportReport,
  seen: SeenInFile,
): Promise<void> {
  if (batch.length === 0) return;
  const identityKey = (provider: string, subject: string) =>
    `${provider} ${options.issuerOf(provider) ?? ''} ${subject}`;
  const existing = await existingRows(
    db,
    batch.map((item) => item.record),
  );
  const fresh: Array<{ line: number; record: ImportRecord }> = [];
  for (const item of batch) {
    const { record, line } = item;
    const inFile = firstInFile(seen, record, line, identityKey);
    if (inFile !== null) {
      problem(report, line, inFile);
      continue;
    }
    const byId = existing.usersById.get(record.id);
    const byEmail = existing.usersByEmail.get(record.email);
    if (byId !== undefined && byId.email === record.email) {
      report.unchanged += 1;
      continue;
    }
    const held = heldElsewhere(existing, record, byId, byEmail, identityKey);
    if (held !== null) problem(report, line, held);
    else fresh.push(item);
  }
  for (const { record } of fresh) {
    report.added += 1;
    report.identities += record.identities.length;
    report.passkeys += record.passkeys.length;
    const format =
      record.passwordHash === null
        ? 'none'
        : ((readHash(record.passwordHash, options.firebase) as { format?: string }).format ?? '');
    report.hashFormats[format] = (report.hashFormats[format] ?? 0) + 1;
  }
  if (!options.check && !hasProblems(report) && fresh.length > 0)
    await writeBatch(
      db,
      fresh.map((item) => item.record),
      at,
      options.issuerOf,
    );
}

/** The line's first key an earlier line of the file has, as a problem. */
function firstInFile(
  seen: SeenInFile,
  record: ImportRecord,
  line: number,
  identityKey: (provider: string, subject: string) => string,
): LineProblem | null {
  const keys: Array<[string, string, string]> = [
    ['id', `id ${record.id}`, `id ${record.id}`],
    ['email', `email ${record.email}`, record.email],
    ...record.identities.map((identity, index): [string, string, string] => [
      `identities.${index}`,
      `identity ${identityKey(identity.provider, identity.subject)}`,
      `${identity.provider} identity ${identity.subject}`,
    ]),
    ...record.passkeys.map((passkey, index): [string, string, string] => [
      `passkeys.${index}.credentialId`,
      `passkey ${passkey.credentialId}`,
      'this passkey',
    ]),
  ];
  for (const [field, key, shown] of keys) {
    const earlier = seen.claim(key, line);
    if (earlier !== undefined) return { field, message: `${shown} is on line ${earlier} too` };
  }
  return null;
}

/** What of the record belongs to another user already, as a problem. */
function heldElsewhere(
  existing: Awaited<ReturnType<typeof existingRows>>,
  record: ImportRecord,
  byId: { email: string } | undefined,
  byEmail: { id: string } | undefined,
  identityKey: (provider: string, subject: string) => string,
): LineProblem | null {
  if (byId !== undefined)
    return { field: 'id', message: `belongs to another user here (${byId.email})` };
  if (byEmail !== undefined)
    return { field: 'email', message: `belongs to another user here (id ${byEmail.id})` };
  for (const [index, identity] of record.identities.entries()) {
    if (existing.identities.has(identityKey(identity.provider, identity.subject)))
      return { field: `identities.${index}`, message: 'is linked to another user here' };
  }
  for (const [index, passkey] of record.passkeys.entries()) {
    if (existing.passkeys.has(passkey.credentialId))
      return { field: `passkeys.${index}.credentialId`, message: 'belongs to another user here' };
  }
  return null;
}
