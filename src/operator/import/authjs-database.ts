import { detectAuthjsLayout, type AuthjsLayout } from './authjs-layout.js';
import {
  accountRowId,
  authenticatorRowId,
  isNoIdentity,
  recordOf,
  type UserRows,
} from './authjs-rows.js';
import { authjsStatements, type AuthjsStatements } from './authjs-statements.js';
import type { ImportRecord } from './import-record.js';
import { openSourceDb } from './open-source-db.js';
import { AuthjsSourceError, type SourceDb, type SourceRow } from './source-db.js';
import type { SourceProblem } from './source-problem.js';

/*
 * `gatehouse import authjs --database URL` (adoption spec §3): an Auth.js adapter's own tables
 * (Prisma's, Drizzle's or the Kysely adapter's defaults, on SQLite or PostgreSQL) read into
 * import records, a page of users at a time.
 */

export { describeAuthjsLayout, type AuthjsAdapter, type AuthjsLayout } from './authjs-layout.js';
export { AuthjsSourceError } from './source-db.js';
export { describeSourceProblem, isSourceProblem, type SourceProblem } from './source-problem.js';

export interface AuthjsSourceOptions {
  /** A SQLite file path or `file:` URL, or a `postgres://` / `postgresql://` URL (`?schema=` as Prisma's). */
  databaseUrl: string;
  /**
   * `TABLE.COLUMN` holding the app's own password hashes: a column of the users table, or of
   * another table that has a user-id column (`userId` / `user_id`). Optional.
   */
  passwordColumn?: string;
  /** Users read per page (keyset pagination by user id), default 1000. */
  pageSize?: number;
  /** Told which adapter's tables were found, before the first item is yielded. */
  onLayout?: (layout: AuthjsLayout) => void;
}

export const defaultAuthjsPageSize = 1000;
// A page's ids go in as one list parameter; the bound keeps a page's rows in memory small.
const maxPageSize = 10_000;

function pageSizeOf(options: AuthjsSourceOptions): number {
  const pageSize = options.pageSize ?? defaultAuthjsPageSize;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize)
    throw new AuthjsSourceError(`the page size must be a whole number from 1 to ${maxPageSize}`);
  return pageSize;
}

/** Rows grouped by their `userId` (as text). */
function byUser(rows: SourceRow[]): Map<string, SourceRow[]> {
  const groups = new Map<string, SourceRow[]>();
  for (const row of rows) {
    const userId = String(row.userId);
    const group = groups.get(userId);
    if (group === undefined) groups.set(userId, [row]);
    else group.push(row);
  }
  return groups;
}

/** The rows of a page of users, each with its accounts, authenticators and passwords. */
async function pageRows(db: SourceDb, statements: AuthjsStatements, users: SourceRow[]) {
  const ids = users.map((user) => String(user.id));
  const read = async (statement: string | null) =>
    statement === null ? new Map<string, SourceRow[]>() : byUser(await db.all(statement, [ids]));
  const accounts = await read(statements.accounts);
  const authenticators = await read(statements.authenticators);
  const passwords = await read(statements.passwords);
  return users.map((user): UserRows => ({
    user,
    accounts: accounts.get(String(user.id)) ?? [],
    authenticators: authenticators.get(String(user.id)) ?? [],
    passwords: passwords.get(String(user.id)) ?? [],
  }));
}

/**
 * Accounts and authenticators whose user is not in the users table (a SQLite file kept without
 * foreign keys): nothing to import them into, so each is a problem rather than left unsaid. An
 * account that is no identity (a passkey's twin, a mailed link's) had nothing to import.
 */
async function orphanProblems(db: SourceDb, layout: AuthjsLayout, statements: AuthjsStatements) {
  const orphan = (table: string, rowId: string, row: SourceRow): SourceProblem => {
    const userId = String(row.userId);
    const reason = `"${userId}" names no row of "${layout.users}"`;
    return { kind: 'problem', table, rowId, field: 'userId', reason, userId };
  };
  const problems = (await db.all(statements.orphanAccounts, []))
    .filter((row) => !isNoIdentity(row))
    .map((row) => orphan(layout.accounts, accountRowId(row), row));
  const { authenticators } = layout;
  if (statements.orphanAuthenticators !== null && authenticators !== null)
    for (const row of await db.all(statements.orphanAuthenticators, []))
      problems.push(orphan(authenticators, authenticatorRowId(row), row));
  return problems;
}

/**
 * Every user of an Auth.js adapter's tables as an import record, in id order, and every row
 * that cannot be part of one as a `SourceProblem` (a user with such a row yields its problems
 * and no record). Reads one page of users at a time, with that page's accounts, authenticators
 * and passwords, all from one read snapshot; the database is closed however the reading ends.
 * Throws an `AuthjsSourceError` when the source is not there or holds no Auth.js layout.
 */
export async function* readAuthjsDatabase(
  options: AuthjsSourceOptions,
): AsyncGenerator<ImportRecord | SourceProblem, void, undefined> {
  const pageSize = pageSizeOf(options);
  const db = await openSourceDb(options.databaseUrl);
  try {
    const layout = detectAuthjsLayout(await db.tables(), db.where, options.passwordColumn);
    options.onLayout?.(layout);
    const statements = authjsStatements(db, layout);
    let after: string | null = null;
    for (;;) {
      const users: SourceRow[] = await (after === null
        ? db.all(statements.firstPage, [pageSize])
        : db.all(statements.nextPage, [pageSize, after]));
      for (const rows of await pageRows(db, statements, users)) {
        const problems: SourceProblem[] = [];
        const record = recordOf(rows, layout, problems);
        yield* problems;
        if (record !== null) yield record;
      }
      const last = users.at(-1);
      if (users.length < pageSize || last === undefined) break;
      after = String(last.id);
    }
    yield* await orphanProblems(db, layout, statements);
  } finally {
    await db.close();
  }
}
