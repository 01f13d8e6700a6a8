import type { AuthjsLayout } from './authjs-layout.js';
import { quote, type SourceDb } from './source-db.js';

/*
 * The statements that read an Auth.js database a page at a time: users in pages by id (keyset,
 * so a page costs the same however far in), then that page's accounts, authenticators and
 * passwords by one list of its ids. Every row comes back under the names the mapping reads.
 */

export interface AuthjsStatements {
  /** Parameters: the page size. */
  firstPage: string;
  /** Parameters: the page size, the last id of the page before. */
  nextPage: string;
  /** Each takes the page's user ids as one list parameter. */
  accounts: string;
  authenticators: string | null;
  /** Null when there is no password column, or it is the users table's. */
  passwords: string | null;
  /** Accounts and authenticators naming a user the users table does not hold. */
  orphanAccounts: string;
  orphanAuthenticators: string | null;
}

/** `"column" as "alias"` for each pair. */
function columns(pairs: Array<[column: string, alias: string]>, prefix = ''): string {
  return pairs.map(([column, alias]) => `${prefix}${quote(column)} as ${quote(alias)}`).join(', ');
}

const accountColumns: Array<[string, string]> = [
  ['userId', 'userId'],
  ['type', 'type'],
  ['provider', 'provider'],
  ['providerAccountId', 'providerAccountId'],
];
const accountOrder = '"userId", "provider", "providerAccountId"';

const authenticatorColumns: Array<[string, string]> = [
  ['userId', 'userId'],
  ['credentialID', 'credentialID'],
  ['credentialPublicKey', 'credentialPublicKey'],
  ['counter', 'counter'],
  ['credentialBackedUp', 'credentialBackedUp'],
  ['transports', 'transports'],
];
const authenticatorOrder = '"userId", "credentialID"';

function userColumns(layout: AuthjsLayout): string {
  const pairs: Array<[string, string]> = [
    ['id', 'id'],
    ['email', 'email'],
    ['name', 'name'],
    ['emailVerified', 'emailVerified'],
  ];
  if (layout.createdAtColumn !== null) pairs.push([layout.createdAtColumn, 'createdAt']);
  if (layout.password?.userIdColumn === null) pairs.push([layout.password.column, 'password']);
  return columns(pairs);
}

/** Rows of `table` whose `userId` names no user. */
function orphans(
  db: SourceDb,
  layout: AuthjsLayout,
  table: string,
  pairs: Array<[string, string]>,
  order: string,
) {
  return `select ${columns(pairs, 'o.')} from ${db.table(table)} o
    where not exists (select 1 from ${db.table(layout.users)} u where u."id" = o."userId")
    order by ${order}`;
}

export function authjsStatements(db: SourceDb, layout: AuthjsLayout): AuthjsStatements {
  const users = `select ${userColumns(layout)} from ${db.table(layout.users)}`;
  const byUser = db.oneOf('"userId"', 1);
  const password = layout.password;
  const authenticators = layout.authenticators;
  return {
    firstPage: `${users} order by "id" limit ${db.parameter(1)}`,
    nextPage: `${users} where "id" > ${db.parameter(2)} order by "id" limit ${db.parameter(1)}`,
    accounts: `select ${columns(accountColumns)} from ${db.table(layout.accounts)} where ${byUser} order by ${accountOrder}`,
    authenticators:
      authenticators === null
        ? null
        : `select ${columns(authenticatorColumns)} from ${db.table(authenticators)} where ${byUser} order by ${authenticatorOrder}`,
    passwords:
      password === null || password.userIdColumn === null
        ? null
        : `select ${columns([
            [password.userIdColumn, 'userId'],
            [password.column, 'password'],
          ])} from ${db.table(password.table)} where ${db.oneOf(quote(password.userIdColumn), 1)}`,
    orphanAccounts: orphans(db, layout, layout.accounts, accountColumns, accountOrder),
    orphanAuthenticators:
      authenticators === null
        ? null
        : orphans(db, layout, authenticators, authenticatorColumns, authenticatorOrder),
  };
}
