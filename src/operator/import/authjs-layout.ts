import { AuthjsSourceError } from './source-db.js';

/*
 * Which Auth.js adapter's tables a database holds, found by their names. Checked against the
 * adapters' sources (github.com/nextauthjs/next-auth): packages/adapter-prisma/prisma/schema.prisma
 * and the Prisma guide's schema (models `User`, `Account`, `Authenticator`, camelCase fields,
 * table names as the models'); adapter-drizzle src/lib/sqlite.ts and pg.ts (`user`, `account`,
 * `authenticator`, the same column names); the Kysely adapter's guide migration (`User`,
 * `Account`, Prisma's names, and no authenticator table: that adapter keeps no passkeys).
 */

/**
 * Whose tables: Prisma's and the Kysely adapter's share their names, so which of the two wrote
 * them is read from a migrations table or an authenticator table, and stays open without either.
 */
export type AuthjsAdapter = 'prisma' | 'kysely' | 'prisma-or-kysely' | 'drizzle';

/** The column of the app's own password hashes (`passwordColumn`, `TABLE.COLUMN`). */
export interface PasswordSource {
  table: string;
  column: string;
  /** The column tying a row to its user; null when the table is the users table itself. */
  userIdColumn: string | null;
}

/** The tables found, and what is read from them. */
export interface AuthjsLayout {
  adapter: AuthjsAdapter;
  /** Where: `sqlite /abs/app.db`, `postgresql host:5432/app (schema "public")`. */
  where: string;
  users: string;
  accounts: string;
  /** Null when there is none (the Kysely adapter's, Prisma schemas from before passkeys). */
  authenticators: string | null;
  /** The users table's creation date (`createdAt` in the Prisma guide's schema), when it has one. */
  createdAtColumn: string | null;
  password: PasswordSource | null;
}

interface TableNames {
  users: string;
  accounts: string;
  authenticators: string;
}

const prismaNames: TableNames = {
  users: 'User',
  accounts: 'Account',
  authenticators: 'Authenticator',
};
const drizzleNames: TableNames = {
  users: 'user',
  accounts: 'account',
  authenticators: 'authenticator',
};

const lookedFor =
  'looked for the Prisma and Kysely adapters\' tables "User", "Account" and "Authenticator", ' +
  'and the Drizzle adapter\'s "user", "account" and "authenticator"';

/** The columns read, by table; every adapter names them alike. */
const neededColumns: Record<keyof TableNames, string[]> = {
  users: ['id', 'name', 'email', 'emailVerified'],
  accounts: ['userId', 'type', 'provider', 'providerAccountId'],
  authenticators: [
    'userId',
    'credentialID',
    'credentialPublicKey',
    'counter',
    'credentialBackedUp',
    'transports',
  ],
};

type Tables = ReadonlyMap<string, ReadonlySet<string>>;

function namesFound(tables: Tables, where: string): TableNames {
  const found = [prismaNames, drizzleNames].filter((names) => tables.has(names.users));
  const [names] = found;
  if (names === undefined)
    throw new AuthjsSourceError(`no Auth.js adapter tables in ${where} (${lookedFor})`);
  if (found.length > 1)
    throw new AuthjsSourceError(
      `both "User" and "user" are tables in ${where}: which adapter's to read is unclear (${lookedFor})`,
    );
  if (!tables.has(names.accounts))
    throw new AuthjsSourceError(
      `${where} has the table "${names.users}" but no table "${names.accounts}" (${lookedFor})`,
    );
  return names;
}

/** Every needed column missing, named at once. */
function checkColumns(tables: Tables, names: TableNames, where: string): void {
  const missing: string[] = [];
  for (const key of ['users', 'accounts', 'authenticators'] as const) {
    const columns = tables.get(names[key]);
    if (columns === undefined) continue;
    for (const column of neededColumns[key])
      if (!columns.has(column)) missing.push(`"${names[key]}"."${column}"`);
  }
  if (missing.length > 0)
    throw new AuthjsSourceError(
      `${where} lacks the column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (${lookedFor})`,
    );
}

function adapterOf(tables: Tables, names: TableNames): AuthjsAdapter {
  if (names === drizzleNames) return 'drizzle';
  if (tables.has('_prisma_migrations')) return 'prisma';
  // The Kysely Migrator's table, with the guide's migration run.
  if (tables.has('kysely_migration')) return 'kysely';
  return tables.has(names.authenticators) ? 'prisma' : 'prisma-or-kysely';
}

function passwordSource(
  spec: string,
  tables: Tables,
  users: string,
  where: string,
): PasswordSource {
  const parts = spec.split('.');
  const [table, column] = parts;
  if (parts.length !== 2 || !table || !column)
    throw new AuthjsSourceError(`the password column "${spec}" is not TABLE.COLUMN`);
  const columns = tables.get(table);
  if (columns === undefined)
    throw new AuthjsSourceError(`the password column's table "${table}" is not in ${where}`);
  if (!columns.has(column))
    throw new AuthjsSourceError(`the password column's table "${table}" has no column "${column}"`);
  if (table === users) return { table, column, userIdColumn: null };
  const userIdColumn = ['userId', 'user_id'].find((name) => columns.has(name));
  if (userIdColumn === undefined)
    throw new AuthjsSourceError(
      `the password column's table "${table}" has neither a "userId" nor a "user_id" column naming the user`,
    );
  return { table, column, userIdColumn };
}

/**
 * The Auth.js tables among `tables` (each with its columns), or an `AuthjsSourceError` naming
 * what is missing and the layouts looked for.
 */
export function detectAuthjsLayout(
  tables: Tables,
  where: string,
  passwordColumn?: string,
): AuthjsLayout {
  const names = namesFound(tables, where);
  checkColumns(tables, names, where);
  const userColumns = tables.get(names.users) ?? new Set<string>();
  return {
    adapter: adapterOf(tables, names),
    where,
    users: names.users,
    accounts: names.accounts,
    authenticators: tables.has(names.authenticators) ? names.authenticators : null,
    createdAtColumn: ['createdAt', 'created_at'].find((name) => userColumns.has(name)) ?? null,
    password:
      passwordColumn === undefined
        ? null
        : passwordSource(passwordColumn, tables, names.users, where),
  };
}

const adapterNames: Record<AuthjsAdapter, string> = {
  prisma: 'the Prisma adapter',
  kysely: 'the Kysely adapter',
  'prisma-or-kysely': 'the Prisma or the Kysely adapter',
  drizzle: 'the Drizzle adapter',
};

/** For the operator: `the Drizzle adapter's tables "user", "account", "authenticator" in sqlite /app.db`. */
export function describeAuthjsLayout(layout: AuthjsLayout): string {
  const tables = [layout.users, layout.accounts, layout.authenticators ?? []].flat();
  const password =
    layout.password === null
      ? ''
      : `, passwords from "${layout.password.table}"."${layout.password.column}"`;
  return `${adapterNames[layout.adapter]}'s tables ${tables.map((table) => `"${table}"`).join(', ')} in ${layout.where}${password}`;
}
