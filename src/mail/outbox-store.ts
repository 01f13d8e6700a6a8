import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, MailOutboxTable } from '../db/schema.js';

export type OutboxState = MailOutboxTable['state'];
export const outboxStates: readonly OutboxState[] = ['held', 'queued', 'sending', 'sent', 'failed'];

/** A mail's record as `mail list` and `mail show` read it; bodies are null once erased. */
export interface OutboxMail {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  bodyText: string | null;
  bodyHtml: string | null;
  state: OutboxState;
  attempts: number;
  nextAttemptAt: number;
  retryUntil: number;
  leaseHolder: string | null;
  leaseUntil: number | null;
  lastError: string | null;
  createdAt: number;
  sentAt: number | null;
  expiresAt: number | null;
}

/** A mail a worker holds the lease on, ready to send. */
export type ClaimedMail = Pick<
  OutboxMail,
  | 'id'
  | 'kind'
  | 'recipient'
  | 'subject'
  | 'bodyText'
  | 'bodyHtml'
  | 'attempts'
  | 'retryUntil'
  | 'expiresAt'
>;

export type RetryResult = 'queued' | 'missing' | 'not-failed' | 'erased';

/** How long metadata of a finished mail stays for `mail list` (bodies go much sooner). */
export const finishedKeptMs = 30 * 24 * 3600 * 1000;
/** A failed or held mail without an expiry (no secret in it) keeps its body this long, for `mail retry`/`show`. */
export const unexpiringBodyKeptMs = 7 * 24 * 3600 * 1000;

const erased = { body_text: null, body_html: null } as const;

function fromRow(row: Selectable<MailOutboxTable>): OutboxMail {
  return {
    id: row.id,
    kind: row.kind,
    recipient: row.recipient,
    subject: row.subject,
    bodyText: row.body_text,
    bodyHtml: row.body_html,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: Number(row.next_attempt_at),
    retryUntil: Number(row.retry_until),
    leaseHolder: row.lease_holder,
    leaseUntil: row.lease_until === null ? null : Number(row.lease_until),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    sentAt: row.sent_at === null ? null : Number(row.sent_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

/**
 * The outbox's statements, the same on SQLite and PostgreSQL except the claim's row locks.
 * Every method takes `now` (ms): the worker's clock, injected in tests.
 */
export function createOutboxStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
  async function claim(now: number, holder: string, leaseMs: number, limit: number) {
    const until = now + leaseMs;
    const due = sql`
      select id from mail_outbox
      where state in ('held', 'queued', 'sending') and next_attempt_at <= ${now}
      order by priority, next_attempt_at limit ${limit}`;
    const take = sql`
      update mail_outbox
      set state = 'sending', attempts = attempts + 1, lease_holder = ${holder},
          lease_until = ${until}, next_attempt_at = ${until}`;
    const stillDue = sql`state in ('held', 'queued', 'sending') and next_attempt_at <= ${now}`;
    // PostgreSQL: rows another instance is claiming right now are skipped, not waited for. The
    // outer conditions are checked again on the locked row, so a row claimed by another
    // instance since the inner select saw it is left alone (no double claim in READ COMMITTED).
    // The selection is a materialized CTE, run once. As an `in (…)` subquery the planner may
    // run it more than once, each run skipping the rows this statement has already taken: on
    // PostgreSQL 15 a claim of 2 took 4 mails (test/mail/delivery.test.ts, the rate cap), past
    // the free connections and the cap.
    // SQLite: one statement is atomic and the database has one writer; no lock clause exists.
    const result = await (
      dialect === 'postgres'
        ? sql<Selectable<MailOutboxTable>>`
            with due as materialized (${due} for update skip locked)
            ${take} where id in (select id from due) and ${stillDue} returning *`
        : sql<Selectable<MailOutboxTable>>`
            ${take} where id in (${due}) and ${stillDue} returning *`
    ).execute(db);
    return result.rows.map((row) => fromRow(row) as ClaimedMail);
  }

  return {
    /** Writes a new mail on `into` (the caller's transaction, or the database). */
    async insert(into: Kysely<Database>, mail: Omit<MailOutboxTable, 'attempts'>): Promise<void> {
      await into.insertInto('mail_outbox').values(mail).execute();
    },

    /**
     * Takes the lease on up to `limit` due mails: queued ones whose next attempt has come, held
     * ones (queued where SMTP_URL was unset, e.g. by the CLI from a shell without it: the
     * instance that has SMTP sends them), and ones being sent whose lease ran out (their
     * instance stopped or crashed). Security mail first (src/mail/priority.ts), then the
     * longest due. One statement on the partial (priority, next_attempt_at) index of migration 008.
     */
    claimDue: claim,

    async markSent(id: string, now: number): Promise<void> {
      await db
        .updateTable('mail_outbox')
        .set({
          ...erased,
          state: 'sent',
          sent_at: now,
          lease_holder: null,
          lease_until: null,
          last_error: null,
        })
        .where('id', '=', id)
        .execute();
    },

    /** Back to the queue for `nextAttemptAt`, while this holder still has the lease. */
    async markRetry(
      id: string,
      holder: string,
      nextAttemptAt: number,
      error: string,
    ): Promise<void> {
      await db
        .updateTable('mail_outbox')
        .set({
          state: 'queued',
          next_attempt_at: nextAttemptAt,
          lease_holder: null,
          lease_until: null,
          last_error: error,
        })
        .where('id', '=', id)
        .where('lease_holder', '=', holder)
        .where('state', '=', 'sending')
        .execute();
    },

    /**
     * Failed for good. The body goes now if its secret no longer matters (expired, or
     * `keepBody` false); otherwise it stays for `mail retry` until `sweep` erases it.
     */
    async markFailed(id: string, error: string, keepBody: boolean): Promise<void> {
      await db
        .updateTable('mail_outbox')
        .set({
          ...(keepBody ? {} : erased),
          state: 'failed',
          lease_holder: null,
          lease_until: null,
          last_error: error,
        })
        .where('id', '=', id)
        .where('state', '=', 'sending')
        .execute();
    },

    /** Extends the lease of a mail this holder is still sending (its attempt may yet succeed). */
    async renewLease(id: string, holder: string, until: number): Promise<void> {
      await db
        .updateTable('mail_outbox')
        .set({ lease_until: until, next_attempt_at: until })
        .where('id', '=', id)
        .where('lease_holder', '=', holder)
        .where('state', '=', 'sending')
        .execute();
    },

    /**
     * A stopping worker gives back the mails it holds but never started: due at once. Those in
     * `keep` (attempts it cut off) keep their lease until it runs out.
     */
    async release(holder: string, now: number, keep: readonly string[] = []): Promise<void> {
      let query = db
        .updateTable('mail_outbox')
        .set({ state: 'queued', next_attempt_at: now, lease_holder: null, lease_until: null })
        .where('lease_holder', '=', holder)
        .where('state', '=', 'sending');
      if (keep.length > 0) query = query.where('id', 'not in', keep);
      await query.execute();
    },

    /**
     * Erases bodies whose secret no longer matters, fails queued mails that expired unsent, and
     * forgets finished mails after `finishedKeptMs`.
     */
    async sweep(now: number): Promise<void> {
      await db
        .updateTable('mail_outbox')
        .set({ ...erased, state: 'failed', last_error: 'expired before it could be sent' })
        .where('state', '=', 'queued')
        .where('expires_at', '<=', now)
        .execute();
      await db
        .updateTable('mail_outbox')
        .set(erased)
        .where('state', 'in', ['held', 'failed'])
        .where('body_text', 'is not', null)
        .where((eb) =>
          eb.or([
            eb('expires_at', '<=', now),
            eb.and([
              eb('expires_at', 'is', null),
              eb('created_at', '<=', now - unexpiringBodyKeptMs),
            ]),
          ]),
        )
        .execute();
      await db
        .deleteFrom('mail_outbox')
        .where('state', 'in', ['held', 'sent', 'failed'])
        .where('created_at', '<=', now - finishedKeptMs)
        .execute();
    },

    async list(options: { state?: OutboxState; limit: number }): Promise<OutboxMail[]> {
      let query = db
        .selectFrom('mail_outbox')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(options.limit);
      if (options.state !== undefined) query = query.where('state', '=', options.state);
      return (await query.execute()).map(fromRow);
    },

    async get(id: string): Promise<OutboxMail | null> {
      const row = await db
        .selectFrom('mail_outbox')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? null : fromRow(row);
    },

    /** A failed or held mail back in the queue, due now, with a new retry window. */
    async retry(id: string, now: number, retryWindowMs: number): Promise<RetryResult> {
      const result = await db
        .updateTable('mail_outbox')
        .set({
          state: 'queued',
          next_attempt_at: now,
          retry_until: now + retryWindowMs,
          last_error: null,
        })
        .where('id', '=', id)
        .where('state', 'in', ['failed', 'held'])
        .where('body_text', 'is not', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return 'queued';
      const mail = await this.get(id);
      if (mail === null) return 'missing';
      return mail.state === 'failed' || mail.state === 'held' ? 'erased' : 'not-failed';
    },

    /** Queued and being sent, the age of the oldest, and held: what the gauges show. */
    async backlog(
      now: number,
    ): Promise<{ queued: number; oldestAgeSeconds: number; held: number }> {
      const row = await db
        .selectFrom('mail_outbox')
        .select((eb) => [
          eb.fn.countAll<number | string>().as('queued'),
          eb.fn.min('created_at').as('oldest'),
        ])
        .where('state', 'in', ['queued', 'sending'])
        .executeTakeFirst();
      const held = await db
        .selectFrom('mail_outbox')
        .select((eb) => eb.fn.countAll<number | string>().as('held'))
        .where('state', '=', 'held')
        .executeTakeFirst();
      const oldest = row?.oldest ?? null;
      return {
        held: Number(held?.held ?? 0),
        queued: Number(row?.queued ?? 0),
        oldestAgeSeconds: oldest === null ? 0 : Math.max(0, (now - Number(oldest)) / 1000),
      };
    },
  };
}

export type OutboxStore = ReturnType<typeof createOutboxStore>;
