import type { Kysely } from 'kysely';
import { createIndex, optional, required, userId } from './schema-parts.js';

// Timestamps are bigint so PostgreSQL holds milliseconds past 2038; SQLite integers are 64-bit.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('email', 'text', (col) => col.notNull().unique())
    .$call(required({ name: 'text', password_hash: 'text' }))
    .addColumn('disabled', 'integer', (col) => col.notNull().defaultTo(0))
    .$call(required({ created_at: 'bigint', updated_at: 'bigint' }))
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .$call(userId)
    .$call(required({ created_at: 'bigint' }))
    .$call(optional({ revoked_at: 'bigint' }))
    .execute();
  await createIndex(db, 'sessions_user_id', 'sessions', ['user_id']);

  await db.schema
    .createTable('signin_throttle')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .$call(required({ failures: 'integer', window_started_at: 'bigint', locked_until: 'bigint' }))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('signin_throttle').execute();
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('users').execute();
}
