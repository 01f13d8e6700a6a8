import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import * as initial from './migrations/001-initial.js';
import * as credentialVersion from './migrations/002-credential-version.js';
import * as mailOutbox from './migrations/003-mail-outbox.js';
import * as accounts from './migrations/004-accounts.js';
import * as invitations from './migrations/005-invitations.js';
import * as signupSecrets from './migrations/006-signup-secrets.js';
import * as pruneIndexes from './migrations/007-prune-indexes.js';
import * as mailPriority from './migrations/008-mail-priority.js';
import * as sessionProofs from './migrations/009-session-proofs.js';
import * as totp from './migrations/011-totp.js';
import * as auditLog from './migrations/013-audit-log.js';
import * as webhookOutbox from './migrations/014-webhook-outbox.js';
import * as passkeys from './migrations/012-passkeys.js';
import * as challengePurpose from './migrations/015-challenge-purpose.js';
import * as factorThrottle from './migrations/016-factor-throttle.js';
import * as auditSeal from './migrations/017-audit-seal.js';
import * as enrolmentCodes from './migrations/018-enrolment-codes.js';
import * as identities from './migrations/019-identities.js';
import * as imports from './migrations/020-imports.js';
import * as tokens from './migrations/021-tokens.js';
import * as signInPlaces from './migrations/022-sign-in-places.js';
import type { Database } from './schema.js';

// Migrations are imported statically so the compiled service needs no file-system scan.
const migrations: Record<string, Migration> = {
  '001-initial': initial,
  '002-credential-version': credentialVersion,
  '003-mail-outbox': mailOutbox,
  '004-accounts': accounts,
  '005-invitations': invitations,
  '006-signup-secrets': signupSecrets,
  '007-prune-indexes': pruneIndexes,
  '008-mail-priority': mailPriority,
  '009-session-proofs': sessionProofs,
  '011-totp': totp,
  '013-audit-log': auditLog,
  '014-webhook-outbox': webhookOutbox,
  '012-passkeys': passkeys,
  '015-challenge-purpose': challengePurpose,
  '016-factor-throttle': factorThrottle,
  '017-audit-seal': auditSeal,
  '018-enrolment-codes': enrolmentCodes,
  '019-identities': identities,
  '020-imports': imports,
  '021-tokens': tokens,
  '022-sign-in-places': signInPlaces,
};

const provider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};

/** Every migration's name, in the order they apply: what `kysely_migration` holds when done. */
export const migrationNames: readonly string[] = Object.keys(migrations).sort();

const latest = migrationNames.at(-1) as string;

/**
 * One read instead of the Migrator's lock-and-compare round trips when nothing is pending: the
 * latest applied, and as many as there are (a database missing one in the middle is not done).
 */
async function isUpToDate(db: Kysely<Database>): Promise<boolean> {
  try {
    const row = await sql<{
      name: string;
      count: number | string;
    }>`select max(name) as name, count(*) as count from kysely_migration`.execute(db);
    return row.rows[0]?.name === latest && Number(row.rows[0]?.count) === migrationNames.length;
  } catch {
    // No migration table yet: a new database.
    return false;
  }
}

// Kysely's own migration lock key: a Kysely Migrator run elsewhere waits for us, and we for it.
const postgresMigrationLock = sql.raw('3853314791062309107');

/**
 * PostgreSQL: the pending migrations and their bookkeeping (Kysely's `kysely_migration` table)
 * in one transaction that first takes a transaction-level advisory lock. Kysely's Migrator
 * takes a session-level lock instead, which a pooler in transaction mode (PgBouncer) may take
 * on one server connection and release on another, leaving it held.
 */
async function migratePostgres(db: Kysely<Database>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${postgresMigrationLock})`.execute(trx);
    await sql`create table if not exists kysely_migration (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(
      trx,
    );
    const done = await sql<{ name: string }>`select name from kysely_migration`.execute(trx);
    const applied = new Set(done.rows.map((row) => row.name));
    for (const name of migrationNames) {
      if (applied.has(name)) continue;
      try {
        await (migrations[name] as Migration).up(trx as unknown as Kysely<unknown>);
      } catch (error) {
        throw new Error(`database migration ${name} failed`, { cause: error });
      }
      await sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
        trx,
      );
    }
  });
}

/**
 * Brings the schema to the latest version; throws with the failing migration's name. Safe when
 * several replicas start at once on one database: on PostgreSQL under a transaction-level
 * advisory lock (above), on SQLite through Kysely's Migrator under the write lock
 * (test/db/postgres-replicas-start.test.ts, directly and through PgBouncer).
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  if (await isUpToDate(db)) return;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await migratePostgres(db);
    return;
  }
  // Any pending migration runs, as on PostgreSQL (above): the two backends agree on what is done.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined) {
    const name = failed?.migrationName ?? 'unknown';
    throw new Error(`database migration ${name} failed`, { cause: error });
  }
}
