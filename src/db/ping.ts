import { sql, type Kysely } from 'kysely';
import type { Dialect } from './open.js';
import type { Database } from './schema.js';

/**
 * Readiness means sign-in can work, and sign-in writes (throttle counters, sessions). On SQLite
 * a plain `select 1` succeeds even while another process holds the write lock, so the ping
 * takes and drops the write lock instead; PostgreSQL answers a round trip.
 */
export async function pingDatabase(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`select 1`.execute(db);
    return;
  }
  await db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    await sql`rollback`.execute(connection);
  });
}
