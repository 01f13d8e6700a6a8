import type { Kysely } from 'kysely';
import { createIndex, leasedOutboxColumns, optional, required } from './schema-parts.js';

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
    .$call(required({ kind: 'text', recipient: 'text', subject: 'text' }))
    // Null once the secret they carry no longer matters: sent, failed past use, or expired.
    .$call(optional({ body_text: 'text', body_html: 'text' }))
    .$call(leasedOutboxColumns)
    .$call(optional({ expires_at: 'bigint' }))
    .execute();
  await createIndex(db, 'mail_outbox_due', 'mail_outbox', ['state', 'next_attempt_at']);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mail_outbox').execute();
}
