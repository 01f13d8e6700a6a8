import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { createIndex, optional, required } from './schema-parts.js';

/** The hash an empty chain starts from: the first entry's `prev_hash`. */
export const auditGenesisHash = '0'.repeat(64);

/**
 * Sessions a person can see and end, and the audit log.
 *
 * - `sessions.public_id`: the id a person's sessions list shows and revokes by. Random and of
 *   its own, so the list hands out nothing a cookie is made of (not the session id, nor a hash
 *   of it). Rows from before get one here. `ip` and `user_agent` are the sign-in's client, as
 *   the list shows them (truncated, as a label); `last_seen_at` is written at most once per few
 *   minutes per session, off the session read's path (src/sessions/last-seen.ts).
 * - `audit_log`: every event, appended and never updated, each entry carrying the hash of the
 *   one before it (src/audit/). No foreign key: an entry outlives its user's removal.
 * - `audit_head`: one row, the chain's newest `seq` and `hash` (appends lock it, so instances on
 *   one PostgreSQL chain in one order; `audit verify` checks it against the newest entry, so a
 *   removed tail shows) and the checkpoint of the retention prune (the last pruned entry's seq
 *   and hash, which the oldest kept entry must follow).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('sessions').addColumn('public_id', 'text').execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('ip', 'text', (col) => col.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('user_agent', 'text', (col) => col.notNull().defaultTo(''))
    .execute();
  await db.schema.alterTable('sessions').addColumn('last_seen_at', 'bigint').execute();
  const randomId = postgres
    ? sql`replace(gen_random_uuid()::text, '-', '')`
    : sql`lower(hex(randomblob(16)))`;
  await sql`update sessions set public_id = ${randomId} where public_id is null`.execute(db);
  await db.schema
    .createIndex('sessions_public_id')
    .on('sessions')
    .column('public_id')
    .unique()
    .execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('seq', 'bigint', (col) => col.primaryKey())
    .$call(required({ at: 'bigint', type: 'text' }))
    .$call(optional({ user_id: 'text', actor: 'text' }))
    .$call(required({ ip: 'text', device: 'text' }))
    .$call(optional({ detail: 'text' }))
    .$call(required({ prev_hash: 'text', hash: 'text' }))
    .execute();
  await createIndex(db, 'audit_log_at', 'audit_log', ['at']);

  await db.schema
    .createTable('audit_head')
    .addColumn('id', 'integer', (col) => col.primaryKey())
    .$call(required({ seq: 'bigint', hash: 'text', pruned_seq: 'bigint', pruned_hash: 'text' }))
    .execute();
  await sql`insert into audit_head (id, seq, hash, pruned_seq, pruned_hash)
    values (1, 0, ${auditGenesisHash}, 0, ${auditGenesisHash})`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_head').execute();
  await db.schema.dropTable('audit_log').execute();
  await db.schema.dropIndex('sessions_public_id').execute();
  for (const column of ['last_seen_at', 'user_agent', 'ip', 'public_id']) {
    await db.schema.alterTable('sessions').dropColumn(column).execute();
  }
}
