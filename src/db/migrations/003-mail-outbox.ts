import type { Kysely } from 'kysely';

/**
 * The outbox (src/mail/): a mail is written here in the same transaction as the change or token
 * that causes it, then delivered by the worker. `next_attempt_at` is when the row is next due
 * for a worker: for a queued mail its next try, for one being sent the end of its lease (then
 * another instance may take it over), so one indexed range finds every due mail.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('recipient', 'text', (col) => col.notNull())
    .addColumn('subject', 'text', (col) => col.notNull())
    // Null once the secret they carry no longer matters: sent, failed past use, or expired.
    .addColumn('body_text', 'text')
    .addColumn('body_html', 'text')
    // held | queued | sending | sent | failed
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('retry_until', 'bigint', (col) => col.notNull())
    .addColumn('lease_holder', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('sent_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('mail_outbox_due')
    .on('mail_outbox')
    .columns(['state', 'next_attempt_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mail_outbox').execute();
}
