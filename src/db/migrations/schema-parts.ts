import { sql, type ColumnDataType, type CreateTableBuilder, type Kysely } from 'kysely';

/*
 * The parts the migrations write their tables with, each compiling to exactly the SQL the
 * builder call it stands for would (a migration's schema never changes once it has run
 * somewhere). Not a migration itself: src/db/migrate.ts lists those by name.
 */

type Columns = Record<string, ColumnDataType>;

/** Adds `columns` in their order, each `not null`. */
export function required(columns: Columns) {
  return <TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) => {
    let built: CreateTableBuilder<TB, string> = table;
    for (const [name, type] of Object.entries(columns))
      built = built.addColumn(name, type, (col) => col.notNull());
    return built;
  };
}

/** Adds `columns` in their order, each nullable. */
export function optional(columns: Columns) {
  return <TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) => {
    let built: CreateTableBuilder<TB, string> = table;
    for (const [name, type] of Object.entries(columns)) built = built.addColumn(name, type);
    return built;
  };
}

/** `user_id`: the user the row belongs to, removed with them. */
export function userId<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table.addColumn('user_id', 'text', (col) =>
    col.notNull().references('users.id').onDelete('cascade'),
  );
}

/** `user_id` as the primary key: one row per user at most, removed with them. */
export function userIdKey<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table.addColumn('user_id', 'text', (col) =>
    col.primaryKey().references('users.id').onDelete('cascade'),
  );
}

/**
 * The columns of a leased outbox (src/outbox/leased-store.ts), the same in the mail outbox
 * (migration 003) and the webhook outbox (014): its state, attempts and the lease.
 */
export function leasedOutboxColumns<TB extends string, C extends string>(
  table: CreateTableBuilder<TB, C>,
) {
  return (
    table
      // held | queued | sending | sent | failed (webhooks are never held)
      .addColumn('state', 'text', (col) => col.notNull())
      .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
      .$call(required({ next_attempt_at: 'bigint', retry_until: 'bigint' }))
      .$call(optional({ lease_holder: 'text', lease_until: 'bigint', last_error: 'text' }))
      .$call(required({ created_at: 'bigint' }))
      .$call(optional({ sent_at: 'bigint' }))
  );
}

/** An index `name` on `table`'s `columns` (a partial one is written out where it is made). */
export async function createIndex(
  db: Kysely<unknown>,
  name: string,
  table: string,
  columns: string[],
): Promise<void> {
  await db.schema.createIndex(name).on(table).columns(columns).execute();
}

/**
 * A partial index `name` on `table`'s `column`, over only the rows where it is set: for a column
 * null in almost every row, which a new row then adds nothing to.
 */
export async function createIndexWhereSet(
  db: Kysely<unknown>,
  name: string,
  table: string,
  column: string,
): Promise<void> {
  await db.schema
    .createIndex(name)
    .on(table)
    .column(column)
    .where(sql.ref(column), 'is not', null)
    .execute();
}
