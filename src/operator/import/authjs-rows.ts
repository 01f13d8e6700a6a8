import { readEmail } from '../../users/email.js';
import type { AuthjsLayout } from './authjs-layout.js';
import {
  readCounter,
  readFlag,
  readInstant,
  readKey,
  readText,
  readTransports,
  type Read,
} from './authjs-values.js';
import type { ImportIdentity, ImportPasskey, ImportRecord } from './import-record.js';
import type { SourceRow } from './source-db.js';
import type { SourceProblem } from './source-problem.js';

/*
 * An Auth.js user's rows (its `User` row, `Account` rows, `Authenticator` rows and password)
 * read into one import record, or into the problems that keep it from being one.
 */

/** Collects one row's problems: table, row and user fixed, field and reason per problem. */
class RowReport {
  constructor(
    private readonly problems: SourceProblem[],
    private readonly table: string,
    private readonly rowId: string,
    private readonly userId: string | null,
  ) {}

  add(field: string, reason: string): void {
    const { table, rowId, userId } = this;
    this.problems.push({ kind: 'problem', table, rowId, field, reason, userId });
  }

  /** The value read, or undefined once the reason is reported. */
  take<T>(field: string, read: Read<T>): T | undefined {
    if (read.ok) return read.value;
    this.add(field, read.reason);
    return undefined;
  }
}

// The account types Auth.js writes (`AdapterAccountType`, and `credentials` from a provider's
// type) that are no identity at a provider: a mailed link's, a password's, and a passkey's
// twin of its `Authenticator` row.
const notIdentities = new Set(['email', 'credentials', 'webauthn']);
const identityTypes = new Set(['oauth', 'oidc']);

/** Whether an account is of a type that is no identity (nothing to import, nothing wrong). */
export function isNoIdentity(row: SourceRow): boolean {
  const type = readText(row.type);
  return type !== null && notIdentities.has(type);
}

/** An account's key, as `SourceProblem.rowId` names it. */
export function accountRowId(row: SourceRow): string {
  return `provider=${readText(row.provider) ?? ''}, providerAccountId=${readText(row.providerAccountId) ?? ''}`;
}

/** An authenticator's key, as `SourceProblem.rowId` names it. */
export function authenticatorRowId(row: SourceRow): string {
  return readText(row.credentialID) ?? '';
}

/** An OAuth or OIDC account as an identity; null for the other types, a problem otherwise. */
function identityOf(
  row: SourceRow,
  table: string,
  problems: SourceProblem[],
): ImportIdentity | null {
  if (isNoIdentity(row)) return null;
  const provider = readText(row.provider) ?? '';
  const subject = readText(row.providerAccountId) ?? '';
  const type = readText(row.type);
  const report = new RowReport(problems, table, accountRowId(row), readText(row.userId));
  if (type === null || !identityTypes.has(type))
    report.add(
      'type',
      `"${type ?? ''}" is none of the types Auth.js writes (oauth, oidc, email, credentials, webauthn)`,
    );
  else if (provider === '') report.add('provider', 'is empty');
  else if (subject === '') report.add('providerAccountId', 'is empty');
  else return { provider, subject };
  return null;
}

/** An authenticator as a passkey, or null with its problems reported. */
function passkeyOf(row: SourceRow, table: string, problems: SourceProblem[]): ImportPasskey | null {
  const report = new RowReport(problems, table, authenticatorRowId(row), readText(row.userId));
  const credentialId = report.take('credentialID', readKey(row.credentialID));
  const publicKey = report.take('credentialPublicKey', readKey(row.credentialPublicKey));
  const counter = report.take('counter', readCounter(row.counter));
  const backedUp = report.take('credentialBackedUp', readFlag(row.credentialBackedUp));
  const transports = report.take('transports', readTransports(row.transports));
  if (
    credentialId === undefined ||
    publicKey === undefined ||
    counter === undefined ||
    backedUp === undefined ||
    transports === undefined
  )
    return null;
  return { credentialId, publicKey, counter, transports, backedUp };
}

/** A password column's value: a hash, null for none, a problem for anything but text. */
function passwordOf(value: unknown, report: RowReport, field: string): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'string') return value;
  report.add(field, 'is not text');
  return null;
}

/** One user's rows, grouped by the page. */
export interface UserRows {
  user: SourceRow;
  accounts: SourceRow[];
  authenticators: SourceRow[];
  /** The password table's rows for the user (none when the password is the users table's). */
  passwords: SourceRow[];
}

function userFields(rows: UserRows, layout: AuthjsLayout, report: RowReport, id: string) {
  const { user } = rows;
  const rawEmail = readText(user.email) ?? '';
  const email = readEmail(rawEmail);
  if (rawEmail.trim() === '')
    report.add('email', 'is empty: every Gatehouse account has an address');
  else if (email === null) report.add('email', `"${rawEmail}" is not one mailbox address`);
  const emailVerifiedAt = report.take('emailVerified', readInstant(user.emailVerified));
  const createdAt =
    layout.createdAtColumn === null
      ? null
      : report.take(layout.createdAtColumn, readInstant(user.createdAt));
  return { id, email, name: readText(user.name) ?? '', emailVerifiedAt, createdAt };
}

function passwordHashOf(
  rows: UserRows,
  layout: AuthjsLayout,
  problems: SourceProblem[],
  id: string,
) {
  const source = layout.password;
  if (source === null) return null;
  if (source.userIdColumn === null)
    return passwordOf(
      rows.user.password,
      new RowReport(problems, layout.users, id, id),
      source.column,
    );
  const report = new RowReport(problems, source.table, id, id);
  if (rows.passwords.length > 1) {
    report.add(
      source.column,
      `has ${rows.passwords.length} rows for the user: which is the password is unclear`,
    );
    return null;
  }
  return passwordOf(rows.passwords[0]?.password, report, source.column);
}

/**
 * The user's record, or (when any of its rows has a problem) null with the problems in
 * `problems`: a record never carries a user with part of its rows left out.
 */
export function recordOf(
  rows: UserRows,
  layout: AuthjsLayout,
  problems: SourceProblem[],
): ImportRecord | null {
  const before = problems.length;
  const id = readText(rows.user.id) ?? '';
  const fields = userFields(rows, layout, new RowReport(problems, layout.users, id, id), id);
  const identities = rows.accounts.flatMap(
    (row) => identityOf(row, layout.accounts, problems) ?? [],
  );
  const passkeys = rows.authenticators.flatMap(
    (row) => passkeyOf(row, layout.authenticators ?? '', problems) ?? [],
  );
  const passwordHash = passwordHashOf(rows, layout, problems, id);
  if (problems.length > before || fields.email === null) return null;
  return {
    ...fields,
    email: fields.email,
    emailVerifiedAt: fields.emailVerifiedAt ?? null,
    createdAt: fields.createdAt ?? null,
    passwordHash,
    identities,
    passkeys,
  };
}
