import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Database, LeasedOutboxColumns } from '../db/schema.js';

/*
 * The statements of a leased outbox, shared by the mail outbox (src/mail/mail-outbox-store.ts) and
 * the webhook outbox (src/webhooks/webhook-outbox-store.ts): a row is written queued, a worker claims it
 * with a lease (lease_holder, lease_until) so no two instances ever hold it at once, the lease's
 * holder records the outcome (sent, retried later, failed), a stopping worker gives back what
 * it holds, an operator lists and retries rows, and finished rows are forgotten after a while.
 */

export type LeasedTableName = 'mail_outbox' | 'webhook_outbox';

/** Every state a leased outbox row can be in; a table may use fewer (webhooks are never held). */
export type LeasedState = 'held' | 'queued' | 'sending' | 'sent' | 'failed';

/** The columns both outbox tables have (src/db/schema.ts): all the shared statements touch. */
type LeasedColumns = LeasedOutboxColumns<LeasedState>;

/** Both outbox tables seen through the columns they share. */
type LeasedView = Kysely<Record<LeasedTableName, LeasedColumns>>;

/**
 * The outbox's one cast. Kysely types each statement for one named table, so a statement meant
 * for "either outbox table" does not type-check against `Database`; the shared statements run on
 * a view of the database that knows the two tables by their common columns only. The constraint
 * checks, when this is called with the real schema, that each table really has those columns
 * with those types; the cast itself changes nothing at run time (the same Kysely instance).
 */
function leasedView<DB extends Record<LeasedTableName, LeasedColumns>>(db: Kysely<DB>): LeasedView {
  return db as unknown as LeasedView;
}

/** What a row shows of its lease and attempts, whichever outbox it is in. */
export interface LeasedRecord<State extends LeasedState> {
  id: string;
  state: State;
  attempts: number;
  nextAttemptAt: number;
  retryUntil: number;
  leaseHolder: string | null;
  leaseUntil: number | null;
  lastError: string | null;
  createdAt: number;
  sentAt: number | null;
}

/** The common columns of a row read back (bigints may come as strings on PostgreSQL). */
export function leasedRecord<State extends LeasedState>(
  row: Omit<Selectable<LeasedColumns>, 'state'> & { state: State },
): LeasedRecord<State> {
  return {
    id: row.id,
    state: row.state,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    retryUntil: Number(row.retry_until),
    leaseHolder: row.lease_holder,
    leaseUntil: row.lease_until === null ? null : Number(row.lease_until),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    sentAt: row.sent_at === null ? null : Number(row.sent_at),
  };
}

/** One outbox table as the shared statements need it: what is really the table's own. */
export interface LeasedTable<Name extends LeasedTableName, Row> {
  name: Name;
  /**
   * The states a due row is claimed from, `sending` among them (a row whose lease ran out): the
   * states of the table's partial claim index, so that index serves the claim.
   */
  claimable: readonly LeasedState[];
  /** The claim's order: the columns of that index. */
  claimOrder: readonly (keyof Database[Name] & string)[];
  /**
   * Columns that may carry a secret (a mail's bodies): set to null when a row is sent, or when it
   * fails and `erase` says so; a row they were erased from cannot be retried. Empty: none.
   */
  erasable: readonly (keyof Database[Name] & string)[];
  fromRow(row: Selectable<Database[Name]>): Row;
}

/**
 * Who may record an attempt's outcome: `{ holder }` only while that worker still holds the
 * row's lease; `'while-sending'` whoever holds it, as long as the row is still being sent;
 * `'always'` whatever became of the row (a mail the server took is sent, even if its lease ran
 * out meanwhile: recording it keeps it from being sent again).
 */
export type RecordedBy = { holder: string } | 'while-sending' | 'always';

export type LeasedRetryResult = 'queued' | 'missing' | 'not-failed' | 'erased';

/** What every statement of one table needs: the database, its view, the table and the engine. */
interface LeasedContext<Name extends LeasedTableName, Row> {
  view: LeasedView;
  name: LeasedTableName;
  dialect: 'sqlite' | 'postgres';
  table: LeasedTable<Name, Row>;
  /** Raw statements reading whole rows: typed as the table's rows, as Kysely types any raw SQL. */
  readRows(query: RawBuilder<Selectable<Database[Name]>>): Promise<Row[]>;
}

/**
 * The statements of one leased outbox table, the same on SQLite and PostgreSQL except the
 * claim's row locks. Every method takes `now` (ms): the worker's clock, injected in tests.
 */
export function createLeasedStore<Name extends LeasedTableName, Row>(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  table: LeasedTable<Name, Row>,
) {
  const context: LeasedContext<Name, Row> = {
    view: leasedView(db),
    name: table.name,
    dialect,
    table,
    readRows: async (query) => (await query.execute(db)).rows.map((row) => table.fromRow(row)),
  };
  return { ...leaseStatements(context), ...operatorStatements(context) };
}

/** An update of row `id`, limited to what `by` may record. */
function outcome(view: LeasedView, name: LeasedTableName, id: string, by: RecordedBy) {
  let query = view.updateTable(name).where('id', '=', id);
  if (by !== 'always') query = query.where('state', '=', 'sending');
  if (typeof by === 'object') query = query.where('lease_holder', '=', by.holder);
  return query;
}

/** Adds the erasure of the table's secret-bearing columns to an update. */
function erasing(view: LeasedView, erasable: readonly string[], query: ReturnType<typeof outcome>) {
  let erased = query;
  for (const column of erasable) erased = erased.set(view.dynamic.ref(column), null);
  return erased;
}

/**
 * Takes the lease on up to `limit` due rows: those in a claimable state whose next attempt has
 * come, which includes rows being sent whose lease ran out (their instance stopped or crashed).
 * One statement on the table's partial claim index.
 */
function claimDue<Name extends LeasedTableName, Row>(
  { name, dialect, table, readRows }: LeasedContext<Name, Row>,
  now: number,
  holder: string,
  leaseMs: number,
  limit: number,
): Promise<Row[]> {
  const until = now + leaseMs;
  const states = sql.join(table.claimable.map((state) => sql.lit(state)));
  const order = sql.join(table.claimOrder.map((column) => sql.ref(column)));
  const due = sql`
    select id from ${sql.table(name)}
    where state in (${states}) and next_attempt_at <= ${now}
    order by ${order} limit ${limit}`;
  const take = sql`
    update ${sql.table(name)}
    set state = 'sending', attempts = attempts + 1, lease_holder = ${holder},
        lease_until = ${until}, next_attempt_at = ${until}`;
  const stillDue = sql`state in (${states}) and next_attempt_at <= ${now}`;
  // PostgreSQL: rows another instance is claiming right now are skipped, not waited for. The
  // outer conditions are checked again on the locked row, so a row claimed by another
  // instance since the inner select saw it is left alone (no double claim in READ COMMITTED).
  // The selection is a materialized CTE, run once. As an `in (…)` subquery the planner may
  // run it more than once, each run skipping the rows this statement has already taken: on
  // PostgreSQL 15 a claim of 2 took 4 mails (test/mail/delivery.test.ts, the rate cap), past
  // the free connections and the cap.
  // SQLite: one statement is atomic and the database has one writer; no lock clause exists.
  // The states are literals, not parameters: SQLite uses a partial index only when the
  // query's own terms imply the index's condition.
  return readRows(
    dialect === 'postgres'
      ? sql`
          with due as materialized (${due} for update skip locked)
          ${take} where id in (select id from due) and ${stillDue} returning *`
      : sql`${take} where id in (${due}) and ${stillDue} returning *`,
  );
}

/** What the worker does with its lease: claim, record the outcome, renew, give back. */
function leaseStatements<Name extends LeasedTableName, Row>(context: LeasedContext<Name, Row>) {
  const { view, name, table } = context;
  const outcomeOf = (id: string, by: RecordedBy) => outcome(view, name, id, by);
  const erasingOutcome = (id: string, by: RecordedBy) =>
    erasing(view, table.erasable, outcomeOf(id, by));
  return {
    claimDue: (now: number, holder: string, leaseMs: number, limit: number): Promise<Row[]> =>
      claimDue(context, now, holder, leaseMs, limit),

    async markSent(id: string, now: number, by: RecordedBy): Promise<void> {
      await erasingOutcome(id, by)
        .set({
          state: 'sent',
          sent_at: now,
          lease_holder: null,
          lease_until: null,
          last_error: null,
        })
        .execute();
    },

    /** Back to the queue for `nextAttemptAt`, while this holder still has the lease. */
    async markRetry(
      id: string,
      holder: string,
      nextAttemptAt: number,
      error: string,
    ): Promise<void> {
      await outcomeOf(id, { holder })
        .set({
          state: 'queued',
          next_attempt_at: nextAttemptAt,
          lease_holder: null,
          lease_until: null,
          last_error: error,
        })
        .execute();
    },

    /** Failed for good; `erase` also clears the table's secret-bearing columns. */
    async markFailed(id: string, error: string, by: RecordedBy, erase: boolean): Promise<void> {
      const query = erase ? erasingOutcome(id, by) : outcomeOf(id, by);
      await query
        .set({ state: 'failed', lease_holder: null, lease_until: null, last_error: error })
        .execute();
    },

    /** Extends the lease of a row this holder is still sending (its attempt may yet succeed). */
    async renewLease(id: string, holder: string, until: number): Promise<void> {
      await outcomeOf(id, { holder }).set({ lease_until: until, next_attempt_at: until }).execute();
    },

    /**
     * A stopping worker gives back the rows it holds but never started: due at once for the
     * next instance. Those in `keep` (attempts it cut off) keep their lease until it runs out.
     */
    async release(holder: string, now: number, keep: readonly string[] = []): Promise<void> {
      let query = view
        .updateTable(name)
        .set({ state: 'queued', next_attempt_at: now, lease_holder: null, lease_until: null })
        .where('lease_holder', '=', holder)
        .where('state', '=', 'sending');
      if (keep.length > 0) query = query.where('id', 'not in', keep);
      await query.execute();
    },
  };
}

/**
 * A row in one of `from` (failed, or held) back in the queue, due now, with a new retry window;
 * unless what it would send was erased.
 */
async function retry<Name extends LeasedTableName, Row>(
  { view, name, table }: LeasedContext<Name, Row>,
  id: string,
  now: number,
  retryWindowMs: number,
  from: readonly LeasedState[],
): Promise<LeasedRetryResult> {
  let query = view
    .updateTable(name)
    .set({
      state: 'queued',
      next_attempt_at: now,
      retry_until: now + retryWindowMs,
      last_error: null,
    })
    .where('id', '=', id)
    .where('state', 'in', from);
  for (const column of table.erasable)
    query = query.where(view.dynamic.ref(column), 'is not', null);
  const result = await query.executeTakeFirst();
  if (Number(result.numUpdatedRows) === 1) return 'queued';
  const row = await view.selectFrom(name).select('state').where('id', '=', id).executeTakeFirst();
  if (row === undefined) return 'missing';
  return from.includes(row.state) ? 'erased' : 'not-failed';
}

/** What an operator, the gauges and the pruning ask of the table. */
function operatorStatements<Name extends LeasedTableName, Row>(context: LeasedContext<Name, Row>) {
  const { view, name, readRows } = context;
  return {
    /** Forgets rows in `states` created at or before `before`. */
    async forget(states: readonly LeasedState[], before: number): Promise<void> {
      await view
        .deleteFrom(name)
        .where('state', 'in', states)
        .where('created_at', '<=', before)
        .execute();
    },

    /** The newest first (by creation), at most `limit`, of one state or all. */
    list(options: { state?: LeasedState; limit: number }): Promise<Row[]> {
      const inState = options.state === undefined ? sql`` : sql`where state = ${options.state}`;
      return readRows(sql`
        select * from ${sql.table(name)} ${inState}
        order by created_at desc, id limit ${options.limit}`);
    },

    async get(id: string): Promise<Row | null> {
      const [row] = await readRows(sql`select * from ${sql.table(name)} where id = ${id}`);
      return row ?? null;
    },

    retry: (
      id: string,
      now: number,
      retryWindowMs: number,
      from: readonly LeasedState[],
    ): Promise<LeasedRetryResult> => retry(context, id, now, retryWindowMs, from),

    /** Queued and being sent, and the age of the oldest: what the gauges show. */
    async backlog(now: number): Promise<{ queued: number; oldestAgeSeconds: number }> {
      const row = await view
        .selectFrom(name)
        .select((eb) => [
          eb.fn.countAll<number | string>().as('queued'),
          eb.fn.min('created_at').as('oldest'),
        ])
        .where('state', 'in', ['queued', 'sending'])
        .executeTakeFirst();
      const oldest = row?.oldest ?? null;
      return {
        queued: Number(row?.queued ?? 0),
        oldestAgeSeconds: oldest === null ? 0 : Math.max(0, (now - Number(oldest)) / 1000),
      };
    },

    /** How many rows are in `state`. */
    async count(state: LeasedState): Promise<number> {
      const row = await view
        .selectFrom(name)
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('state', '=', state)
        .executeTakeFirst();
      return Number(row?.count ?? 0);
    },
  };
}
