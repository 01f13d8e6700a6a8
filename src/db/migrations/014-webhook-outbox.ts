import { sql, type Kysely } from 'kysely';
import { createIndex, leasedOutboxColumns, required } from './schema-parts.js';

/**
 * The webhook outbox (src/webhooks/): one row per event per endpoint, written in the same
 * transaction as the change that causes it, then delivered by the worker. `event_id` is the
 * `webhook-id` every attempt carries (the receiver's idempotency key); `payload` is the body,
 * fixed when written so every attempt signs the same bytes. `next_attempt_at` is, as in the
 * mail outbox (migration 003), the next try of a queued row or the end of a lease being held,
 * and the partial index holds only the rows a worker may claim.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_outbox')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .$call(required({ event_id: 'text', endpoint: 'text', type: 'text', payload: 'text' }))
    .$call(leasedOutboxColumns)
    .execute();
  await db.schema
    .createIndex('webhook_outbox_claim')
    .on('webhook_outbox')
    .columns(['next_attempt_at'])
    .where(sql.ref('state'), 'in', ['queued', 'sending'])
    .execute();
  await createIndex(db, 'webhook_outbox_created', 'webhook_outbox', ['created_at']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_outbox').execute();
}
