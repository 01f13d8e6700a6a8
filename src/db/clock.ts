import { PostgresAdapter, sql } from 'kysely';

/**
 * The database's clock in milliseconds, as an expression: instances whose own clocks differ
 * still stamp rows of one table in the order the database saw them.
 */
export function databaseNow(db: { getExecutor(): { readonly adapter: object } }) {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
}
