import type { Kysely } from 'kysely';
import { createIndex, createIndexWhereSet } from './schema-parts.js';

/**
 * Indexes for what the periodic prune filters on (src/main.ts), so each of its batches
 * (src/db/delete-in-batches.ts) finds its rows by index instead of scanning the table: with
 * 3,000,000 sessions the scan of `created_at` took a quarter of a second, holding SQLite's
 * writer. The indexes over columns that are null for almost every row (`revoked_at`, `used_at`)
 * are partial: a new session or secret adds nothing to them. The throttle's rows are found by
 * their window's start: most are unlocked (`locked_until` in the past), so that filter would not narrow them. `sessions(user_id)` exists since 001.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createIndex(db, 'sessions_created_at', 'sessions', ['created_at']);
  await createIndexWhereSet(db, 'sessions_revoked_at', 'sessions', 'revoked_at');
  await createIndex(db, 'account_events_at', 'account_events', ['at']);
  await createIndex(db, 'account_tokens_expires_at', 'account_tokens', ['expires_at']);
  await createIndexWhereSet(db, 'account_tokens_used_at', 'account_tokens', 'used_at');
  await createIndex(db, 'signin_throttle_window_started_at', 'signin_throttle', [
    'window_started_at',
  ]);
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
