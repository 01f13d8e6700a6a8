import { sql, type Kysely } from 'kysely';

/**
 * Security mails first (issue 25): `mail_outbox.priority`, set at enqueue from the mail's kind
 * (src/mail/priority.ts; 0 for a reset or a security notice, 1 for sign-up, address-change and
 * invitation mail), so a flood of sign-ups cannot keep a reset link in the queue until it
 * expires. The claim takes due mail by (priority, next_attempt_at): the partial index holds only
 * the rows a worker may claim, in that order, so the sent and failed rows kept for 30 days are
 * never walked. Mails queued before this migration keep their kind's priority.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('mail_outbox')
    .addColumn('priority', 'integer', (col) => col.notNull().defaultTo(1))
    .execute();
  await sql`update mail_outbox set priority = 0 where kind in ('password-reset', 'password-changed-notice', 'email-changed-notice', 'account-locked-notice', 'test')`.execute(
    db,
  );
  await db.schema
    .createIndex('mail_outbox_claim')
    .on('mail_outbox')
    .columns(['priority', 'next_attempt_at'])
    .where(sql.ref('state'), 'in', ['held', 'queued', 'sending'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('mail_outbox_claim').execute();
  await db.schema.alterTable('mail_outbox').dropColumn('priority').execute();
}
