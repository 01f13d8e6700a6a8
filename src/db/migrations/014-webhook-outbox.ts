import { sql, type Kysely } from 'kysely';

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
    .addColumn('event_id', 'text', (col) => col.notNull())
    .addColumn('endpoint', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('payload', 'text', (col) => col.notNull())
    // queued | sending | sent | failed
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('retry_until', 'bigint', (col) => col.notNull())
    .addColumn('lease_holder', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('webhook_outbox_claim')
    .on('webhook_outbox')
    .columns(['next_attempt_at'])
    .where(sql.ref('state'), 'in', ['queued', 'sending'])
    .execute();
  await db.schema
    .createIndex('webhook_outbox_created')
    .on('webhook_outbox')
    .columns(['created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_outbox').execute();
}
