import type { Kysely, Selectable } from 'kysely';
import type { Database, WebhookOutboxTable } from '../db/schema.js';
import { createLeasedStore, leasedRecord, type LeasedRecord } from '../outbox/leased-store.js';

export type WebhookState = WebhookOutboxTable['state'];
export const webhookStates: readonly WebhookState[] = ['queued', 'sending', 'sent', 'failed'];

/** A delivery's record as `webhooks list` and the admin API show it (never the payload's secret: it has none). */
export interface WebhookDelivery extends LeasedRecord<WebhookState> {
  eventId: string;
  endpoint: string;
  type: string;
  payload: string;
}

export type WebhookRetryResult = 'queued' | 'missing' | 'not-failed';

/** How long a finished delivery stays listed. */
export const finishedWebhookKeptMs = 30 * 24 * 3600 * 1000;

function fromRow(row: Selectable<WebhookOutboxTable>): WebhookDelivery {
  const { endpoint, type, payload } = row;
  return { ...leasedRecord(row), eventId: row.event_id, endpoint, type, payload };
}

/**
 * The webhook outbox: the leased-outbox statements (src/outbox/leased-store.ts) on
 * `webhook_outbox`, as the mail outbox's: due rows leased in one statement, on PostgreSQL skipping
 * rows another instance is claiming and checking them again once locked, so no two instances
 * ever hold one row at once. Every outcome is recorded only by the lease's holder.
 */
export function createWebhookStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
  const leased = createLeasedStore(db, dialect, {
    name: 'webhook_outbox',
    claimable: ['queued', 'sending'],
    // The partial next_attempt_at index of migration 014.
    claimOrder: ['next_attempt_at'],
    erasable: [],
    fromRow,
  });

  return {
    /** Takes the lease on up to `limit` due rows: queued ones now due, and leases run out. */
    claimDue: leased.claimDue,

    async markSent(id: string, holder: string, now: number): Promise<void> {
      await leased.markSent(id, now, { holder });
    },

    markRetry: leased.markRetry,

    async markFailed(id: string, holder: string, error: string): Promise<void> {
      await leased.markFailed(id, error, { holder }, false);
    },

    /** A stopping worker gives back what it holds: due at once for the next instance. */
    async release(holder: string, now: number): Promise<void> {
      await leased.release(holder, now);
    },

    /** Forgets finished deliveries after `finishedWebhookKeptMs`. */
    async sweep(now: number): Promise<void> {
      await leased.forget(['sent', 'failed'], now - finishedWebhookKeptMs);
    },

    list(options: { state?: WebhookState; limit: number }): Promise<WebhookDelivery[]> {
      return leased.list(options);
    },

    /** A failed delivery back in the queue, due now, with a new retry window. */
    async retry(id: string, now: number, retryWindowMs: number): Promise<WebhookRetryResult> {
      const result = await leased.retry(id, now, retryWindowMs, ['failed']);
      // 'erased' cannot be: a webhook row has nothing erasable, so a failed one is always retried.
      return result === 'erased' ? 'not-failed' : result;
    },

    /** Queued and being sent, and the age of the oldest: what the gauges show. */
    backlog: leased.backlog,
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
