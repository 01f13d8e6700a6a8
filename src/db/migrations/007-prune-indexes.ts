import { sql, type Kysely } from 'kysely';

/**
 * Indexes for what the periodic prune filters on (src/main.ts), so each of its batches
 * (src/db/delete-in-batches.ts) finds its rows by index instead of scanning the table: with
 * 3,000,000 sessions the scan of `created_at` took a quarter of a second, holding SQLite's
 * writer. The indexes over columns that are null for almost every row (`revoked_at`, `used_at`)
 * are partial: a new session or secret adds nothing to them. The throttle's rows are found by
 * their window's start: most are unlocked (`locked_until` in the past), so that filter would not narrow them. `sessions(user_id)` exists since 001.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('sessions_created_at').on('sessions').column('created_at').execute();
  await db.schema
    .createIndex('sessions_revoked_at')
    .on('sessions')
    .column('revoked_at')
    .where(sql.ref('revoked_at'), 'is not', null)
    .execute();
  await db.schema.createIndex('account_events_at').on('account_events').column('at').execute();
  await db.schema
    .createIndex('account_tokens_expires_at')
    .on('account_tokens')
    .column('expires_at')
    .execute();
  await db.schema
    .createIndex('account_tokens_used_at')
    .on('account_tokens')
    .column('used_at')
    .where(sql.ref('used_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('signin_throttle_window_started_at')
    .on('signin_throttle')
    .column('window_started_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of [
    'signin_throttle_window_started_at',
    'account_tokens_used_at',
    'account_tokens_expires_at',
    'account_events_at',
    'sessions_revoked_at',
    'sessions_created_at',
  ]) {
    await db.schema.dropIndex(name).execute();
  }
}
