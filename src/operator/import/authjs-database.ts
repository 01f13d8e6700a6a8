import { readEmail } from '../../users/email.js';
import {
  ForeignDatabaseError,
  openForeignDatabase,
  quoted,
  type ForeignDatabase,
} from './foreign-database.js';
import { readImportLine } from './import-line.js';
import type { ImportPasskey } from './import-record.js';
import type { SourceLine } from './import-users.js';

/*
 * An Auth.js app's users read from its adapter's own tables (adoption spec §3), as records for
 * the import (import-users.ts): the Prisma and Kysely adapters' `User`, `Account`,
 * `Authenticator`, and the Drizzle adapter's `user`, `account`, `authenticator`, on SQLite or
 * PostgreSQL. Users are read a page at a time by id, with their accounts and authenticators.
 */

export interface AuthjsSourceOptions {
  /** A SQLite file (`file:./prisma/dev.db`) or a PostgreSQL URL. */
  databaseUrl: string;
  /** `TABLE.COLUMN` of the app's own password hashes: the users table's, or one keyed by user id. */
  passwordColumn?: string | undefined;
  pageSize?: number;
}

/** A layout: the adapters' table names, each casing tried in order. */
const tableNames = {
  users: ['User', 'user', 'users'],
  accounts: ['Account', 'account', 'accounts'],
  authenticators: ['Authenticator', 'authenticator', 'authenticators'],
};
const userIdColumns = ['userId', 'user_id'];

/** Thrown for a database this reader cannot read as an Auth.js adapter's: the CLI prints it. */
export class AuthjsLayoutError extends ForeignDatabaseError {}

interface Layout {
  users: string;
  /** The users table's optional columns present. */
  userColumns: Set<string>;
  accounts: { table: string; userId: string } | undefined;
  authenticators: { table: string; userId: string } | undefined;
  password: { table: string; column: string; userId: string | undefined } | undefined;
}

async function findLayout(
  db: ForeignDatabase,
  passwordColumn: string | undefined,
): Promise<Layout> {
  const tables = new Set(await db.tables());
  const pick = (names: string[]) => names.find((name) => tables.has(name));
  const users = pick(tableNames.users);
  if (users === undefined)
    throw new AuthjsLayoutError(
      `no users table: looked for ${tableNames.users.join(', ')} (the Prisma, Kysely and Drizzle adapters' names)`,
    );
  const userColumns = new Set(await db.columns(users));
  for (const needed of ['id', 'email'])
    if (!userColumns.has(needed))
      throw new AuthjsLayoutError(`the users table ${users} has no column ${needed}`);
  const keyed = async (name: string | undefined) => {
    if (name === undefined) return undefined;
    const columns = await db.columns(name);
    const userId = userIdColumns.find((column) => columns.includes(column));
    if (userId === undefined)
      throw new AuthjsLayoutError(
        `the table ${name} has no user id column (${userIdColumns.join(' or ')})`,
      );
    return { table: name, userId, columns };
  };
  const accounts = await keyed(pick(tableNames.accounts));
  for (const needed of ['type', 'provider', 'providerAccountId'])
    if (accounts !== undefined && !accounts.columns.includes(needed))
      throw new AuthjsLayoutError(`the accounts table ${accounts.table} has no column ${needed}`);
  const authenticators = await keyed(pick(tableNames.authenticators));
  return {
    users,
    userColumns,
    accounts: accounts && { table: accounts.table, userId: accounts.userId },
    authenticators: authenticators && {
      table: authenticators.table,
      userId: authenticators.userId,
    },
    password: await passwordSource(db, passwordColumn, users, tables),
  };
}

async function passwordSource(
  db: ForeignDatabase,
  passwordColumn: string | undefined,
  users: string,
  tables: Set<string>,
): Promise<Layout['password']> {
  if (passwordColumn === undefined) return undefined;
  const dot = passwordColumn.lastIndexOf('.');
  const table = passwordColumn.slice(0, dot);
  const column = passwordColumn.slice(dot + 1);
  if (dot < 1 || column === '' || !tables.has(table))
    throw new AuthjsLayoutError(
      `--password-column ${passwordColumn}: no such table (write TABLE.COLUMN, e.g. User.password)`,
    );
  const columns = await db.columns(table);
  if (!columns.includes(column))
    throw new AuthjsLayoutError(
      `--password-column ${passwordColumn}: ${table} has no column ${column}`,
    );
  if (table === users) return { table, column, userId: undefined };
  const userId = userIdColumns.find((name) => columns.includes(name));
  if (userId === undefined)
    throw new AuthjsLayoutError(
      `--password-column ${passwordColumn}: ${table} is not the users table and has no user id column (${userIdColumns.join(' or ')})`,
    );
  return { table, column, userId };
}

/** A time as the adapters store it (epoch ms, seconds, ISO text, a Date), as epoch ms. */
function timeOf(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number' || typeof value === 'bigint') {
    const n = Number(value);
    return n < 1e11 ? n * 1000 : n;
  }
  const parsed = Date.parse(String(value));
  return Number.isNaN(parsed) ? null : parsed;
}

/** base64 or base64url, as base64url without padding; null when it is neither. */
function base64url(value: unknown): string | null {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return null;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 0 ? null : bytes.toString('base64url');
}

/** Rows of `table` whose `column` is one of `ids`, grouped by it. */
async function byUser(db: ForeignDatabase, table: string, column: string, ids: readonly string[]) {
  const grouped = new Map<string, Record<string, unknown>[]>();
  if (ids.length === 0) return grouped;
  const rows = await db.all(
    `select * from ${quoted(table)} where ${quoted(column)} in (${ids.map(() => '?').join(', ')})`,
    ids,
  );
  for (const row of rows) {
    const id = String(row[column]);
    grouped.set(id, [...(grouped.get(id) ?? []), row]);
  }
  return grouped;
}

/** A row's passkey, or what is wrong with it. */
function passkeyOf(row: Record<string, unknown>): ImportPasskey | string {
  const credentialId = base64url(row.credentialID);
  const publicKey = base64url(row.credentialPublicKey);
  if (credentialId === null) return 'credentialID is not base64';
  if (publicKey === null) return 'credentialPublicKey is not base64';
  const transports =
    typeof row.transports === 'string' && row.transports !== '' ? row.transports.split(',') : [];
  return {
    credentialId,
    publicKey,
    counter: Number(row.counter ?? 0),
    transports: transports.map((transport) => transport.trim()).filter(Boolean),
    backedUp: row.credentialBackedUp === true || Number(row.credentialBackedUp) === 1,
  };
}

/**
 * The app's users as import lines, `line` counting users read: a user that cannot be imported
 * (no address, a key that is not base64) is a problem naming the table, its id and the field.
 * Throws AuthjsLayoutError for a database that is no Auth.js adapter's.
 */
export async function* readAuthjsDatabase(
  options: AuthjsSourceOptions,
): AsyncGenerator<SourceLine> {
  const db = await openForeignDatabase(options.databaseUrl);
  const pageSize = options.pageSize ?? 1000;
  try {
    const layout = await findLayout(db, options.passwordColumn);
    const extra = ['name', 'emailVerified', 'createdAt'].filter((column) =>
      layout.userColumns.has(column),
    );
    const select = ['id', 'email', ...extra].map(quoted).join(', ');
    let after = '';
    let line = 0;
    for (;;) {
      const users = await db.all(
        `select ${select} from ${quoted(layout.users)} where ${quoted('id')} > ? order by ${quoted('id')} limit ?`,
        [after, pageSize],
      );
      if (users.length === 0) return;
      const ids = users.map((user) => String(user.id));
      after = ids[ids.length - 1] ?? after;
      const [accounts, authenticators, passwords] = await Promise.all([
        layout.accounts
          ? byUser(db, layout.accounts.table, layout.accounts.userId, ids)
          : new Map(),
        layout.authenticators
          ? byUser(db, layout.authenticators.table, layout.authenticators.userId, ids)
          : new Map(),
        layout.password
          ? byUser(db, layout.password.table, layout.password.userId ?? 'id', ids)
          : new Map(),
      ]);
      for (const user of users) {
        line += 1;
        const id = String(user.id);
        const at = (field: string) => `${layout.users}(id=${id}).${field}`;
        const email = typeof user.email === 'string' ? readEmail(user.email) : null;
        if (email === null) {
          yield { line, problem: { field: at('email'), message: 'is not an email address' } };
          continue;
        }
        const passkeys: ImportPasskey[] = [];
        let problem: string | undefined;
        for (const row of (authenticators.get(id) ?? []) as Record<string, unknown>[]) {
          const passkey = passkeyOf(row);
          if (typeof passkey === 'string') problem = passkey;
          else passkeys.push(passkey);
        }
        if (problem !== undefined) {
          yield {
            line,
            problem: { field: `${layout.authenticators?.table}(userId=${id})`, message: problem },
          };
          continue;
        }
        const hashRow = ((passwords.get(id) ?? []) as Record<string, unknown>[])[0];
        const hash = hashRow?.[layout.password?.column ?? ''];
        // Through the import line's own checks, so a row is held to what a file's line is.
        const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
        const read = readImportLine(
          JSON.stringify({
            id,
            email,
            name: typeof user.name === 'string' ? user.name.trim() : null,
            emailVerified: iso(timeOf(user.emailVerified)),
            passwordHash: typeof hash === 'string' && hash !== '' ? hash : null,
            createdAt: iso(timeOf(user.createdAt)),
            identities: ((accounts.get(id) ?? []) as Record<string, unknown>[])
              .filter((row) => row.type === 'oauth' || row.type === 'oidc')
              .map((row) => ({
                provider: String(row.provider),
                subject: String(row.providerAccountId),
              })),
            passkeys,
          }),
          Date.now(),
        );
        yield 'record' in read
          ? { line, record: read.record }
          : { line, problem: { field: at(read.problem.field), message: read.problem.message } };
      }
    }
  } finally {
    await db.close();
  }
}
