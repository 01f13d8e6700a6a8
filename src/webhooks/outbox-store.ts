import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, WebhookOutboxTable } from '../db/schema.js';

export type WebhookState = WebhookOutboxTable['state'];
export const webhookStates: readonly WebhookState[] = ['queued', 'sending', 'sent', 'failed'];

/** A delivery's record as `webhooks list` and the admin API show it (never the payload's secret: it has none). */
export interface WebhookDelivery {
  id: string;
  eventId: string;
  endpoint: string;
  type: string;
  payload: string;
  state: WebhookState;
  attempts: number;
  nextAttemptAt: number;
  retryUntil: number;
  leaseHolder: string | null;
  lastError: string | null;
  createdAt: number;
  sentAt: number | null;
}

export type WebhookRetryResult = 'queued' | 'missing' | 'not-failed';

/** How long a finished delivery stays listed. */
export const finishedWebhookKeptMs = 30 * 24 * 3600 * 1000;

function fromRow(row: Selectable<WebhookOutboxTable>): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    endpoint: row.endpoint,
    type: row.type,
    payload: row.payload,
    state: row.state,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    retryUntil: Number(row.retry_until),
    leaseHolder: row.lease_holder,
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    sentAt: row.sent_at === null ? null : Number(row.sent_at),
  };
}

/**
 * The webhook outbox's statements, the claim as the mail outbox's (src/mail/outbox-store.ts):
 * due rows leased in one statement, on PostgreSQL skipping rows another instance is claiming
 * and checking them again once locked, so no two instances ever hold one row at once.
 */
export function createWebhookStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
  const ownedBy = (id: string, holder: string) =>
    db
      .updateTable('webhook_outbox')
      .where('id', '=', id)
      .where('lease_holder', '=', holder)
      .where('state', '=', 'sending');

  return {
    /** Takes the lease on up to `limit` due rows: queued ones now due, and leases run out. */
    async claimDue(now: number, holder: string, leaseMs: number, limit: number) {
      const until = now + leaseMs;
      const due = sql`
        select id from webhook_outbox
        where state in ('queued', 'sending') and next_attempt_at <= ${now}
        order by next_attempt_at limit ${limit}`;
      const take = sql`
        update webhook_outbox
        set state = 'sending', attempts = attempts + 1, lease_holder = ${holder},
            lease_until = ${until}, next_attempt_at = ${until}`;
      const stillDue = sql`state in ('queued', 'sending') and next_attempt_at <= ${now}`;
      const result = await (
        dialect === 'postgres'
          ? sql<Selectable<WebhookOutboxTable>>`
              with due as materialized (${due} for update skip locked)
              ${take} where id in (select id from due) and ${stillDue} returning *`
          : sql<Selectable<WebhookOutboxTable>>`
              ${take} where id in (${due}) and ${stillDue} returning *`
      ).execute(db);
      return result.rows.map(fromRow);
    },

    async markSent(id: string, holder: string, now: number): Promise<void> {
      await ownedBy(id, holder)
        .set({
          state: 'sent',
          sent_at: now,
          lease_holder: null,
          lease_until: null,
          last_error: null,
        })
        .execute();
    },

    async markRetry(id: string, holder: string, nextAttemptAt: number, error: string) {
      await ownedBy(id, holder)
        .set({
          state: 'queued',
          next_attempt_at: nextAttemptAt,
          lease_holder: null,
          lease_until: null,
          last_error: error,
        })
        .execute();
    },

    async markFailed(id: string, holder: string, error: string): Promise<void> {
      await ownedBy(id, holder)
        .set({ state: 'failed', lease_holder: null, lease_until: null, last_error: error })
        .execute();
    },

    /** A stopping worker gives back what it holds: due at once for the next instance. */
    async release(holder: string, now: number): Promise<void> {
      await db
        .updateTable('webhook_outbox')
        .set({ state: 'queued', next_attempt_at: now, lease_holder: null, lease_until: null })
        .where('lease_holder', '=', holder)
        .where('state', '=', 'sending')
        .execute();
    },

    /** Forgets finished deliveries after `finishedWebhookKeptMs`. */
    async sweep(now: number): Promise<void> {
      await db
        .deleteFrom('webhook_outbox')
        .where('state', 'in', ['sent', 'failed'])
        .where('created_at', '<=', now - finishedWebhookKeptMs)
        .execute();
    },

    async list(options: { state?: WebhookState; limit: number }): Promise<WebhookDelivery[]> {
      let query = db
        .selectFrom('webhook_outbox')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(options.limit);
      if (options.state !== undefined) query = query.where('state', '=', options.state);
      return (await query.execute()).map(fromRow);
    },

    /** A failed delivery back in the queue, due now, with a new retry window. */
    async retry(id: string, now: number, retryWindowMs: number): Promise<WebhookRetryResult> {
      const result = await db
        .updateTable('webhook_outbox')
        .set({
          state: 'queued',
          next_attempt_at: now,
          retry_until: now + retryWindowMs,
          last_error: null,
        })
        .where('id', '=', id)
        .where('state', '=', 'failed')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return 'queued';
      const row = await db
        .selectFrom('webhook_outbox')
        .select('id')
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? 'missing' : 'not-failed';
    },

    /** Queued and being sent, and the age of the oldest: what the gauges show. */
    async backlog(now: number): Promise<{ queued: number; oldestAgeSeconds: number }> {
      const row = await db
        .selectFrom('webhook_outbox')
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
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
