/**
 * `npm run bench:prune`: the periodic prune on a large SQLite store. Seeds 1,000,000 users and
 * 3,000,000 sessions (`PRUNE_USERS`, three sessions each) in one transaction with prepared
 * inserts, about 3 % of the sessions past the absolute lifetime and 1 % revoked, then measures:
 *
 * - the prune as it was before migration 007 (one statement, an OR over unindexed columns),
 *   run inside a transaction that is rolled back: how long it held the writer;
 * - migration 007 on this store (building its indexes);
 * - the service's own prune (`dist/`, batches sized toward `pruneStepTargetMs`, checkpoints
 *   in a worker thread), while a session is written every 2 ms on the same connection, as
 *   sign-ins are: each statement's time, and how long each of those writes waited;
 * - a second prune with nothing left to delete, and the old statement with nothing to delete.
 *
 * `PRUNE_WAL_AUTOCHECKPOINT=N` sets SQLite's automatic checkpoint on the service's connection
 * before its prune (0: off), for comparing how checkpoints weigh on the statements.
 *
 * Loopback-free (one process, one temp folder, removed at exit).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { log, now, root } from './common.ts';
import { cleanup, installCleanupHandlers, makeTemp } from './processes.ts';

interface Closable {
  destroy(): Promise<void>;
}
interface DistOpen {
  openDatabase(url: string): { db: Closable; sqlite?: DatabaseSync };
}
interface DistMigrate {
  migrateToLatest(db: Closable): Promise<void>;
}
interface DistSessions {
  createKyselySessionStore(
    db: Closable,
    handles: { sqlite?: DatabaseSync },
  ): {
    prune(
      createdBefore: number,
      observe?: (ms: number, rows: number, checkpointMs?: number) => void,
    ): Promise<void>;
  };
}

const users = Number(process.env.PRUNE_USERS ?? 1_000_000);
const sessionsPerUser = 3;
const dayMs = 86_400_000;
const absoluteMaxAgeMs = 90 * dayMs;
const migration007Indexes = [
  'sessions_created_at',
  'sessions_revoked_at',
  'account_events_at',
  'account_tokens_expires_at',
  'account_tokens_used_at',
  'signin_throttle_window_started_at',
];

const dist = (file: string) => import(pathToFileURL(path.join(root, 'dist', file)).href);
const round = (ms: number) => Math.round(ms * 10) / 10;

function seed(file: string, at: number): void {
  const sqlite = new DatabaseSync(file);
  for (const index of migration007Indexes) sqlite.exec(`drop index if exists ${index}`);
  sqlite.exec(`delete from kysely_migration where name = '007-prune-indexes'`);
  const user = sqlite.prepare(
    'insert into users (id, email, name, password_hash, disabled, created_at, updated_at) values (?, ?, ?, ?, 0, ?, ?)',
  );
  const session = sqlite.prepare(
    'insert into sessions (id, user_id, created_at, revoked_at) values (?, ?, ?, ?)',
  );
  const started = now();
  sqlite.exec('begin');
  let n = 0;
  for (let u = 0; u < users; u += 1) {
    const userId = randomUUID();
    user.run(userId, `user-${u}@example.com`, `User ${u}`, 'not-a-hash', at, at);
    for (let s = 0; s < sessionsPerUser; s += 1, n += 1) {
      // Spread over 93 days, so about 3 % are past the 90-day lifetime; 1 % revoked.
      const createdAt = at - Math.floor(((n * 7919) % 93_000) * (dayMs / 1000));
      session.run(randomUUID(), userId, createdAt, n % 100 === 0 ? at : null);
    }
  }
  sqlite.exec('commit');
  log(`seeded ${users} users, ${n} sessions in ${Math.round(now() - started)} ms`);
  sqlite.close();
}

/** The old prune: one statement, an OR over unindexed columns, undone afterwards. */
function oldPruneMs(file: string, cut: number): { ms: number; rows: number } {
  const sqlite = new DatabaseSync(file);
  const statement = sqlite.prepare(
    'delete from sessions where revoked_at is not null or created_at < ?',
  );
  sqlite.exec('begin');
  const started = now();
  const rows = Number(statement.run(cut).changes);
  const ms = now() - started;
  sqlite.exec('rollback');
  sqlite.close();
  return { ms, rows };
}

/**
 * A sign-in's write every 2 ms on the service's own connection, as sign-ins run: each waits for
 * the event loop (a batch runs on it) and then for its insert. Reports each wait.
 */
function signInProbe(sqlite: DatabaseSync, userId: string): () => number[] {
  const insert = sqlite.prepare('insert into sessions (id, user_id, created_at) values (?, ?, ?)');
  const waits: number[] = [];
  const everyMs = 2;
  let due = now() + everyMs;
  const timer = setInterval(() => {
    insert.run(randomUUID(), userId, Date.now());
    waits.push(now() - due);
    due = now() + everyMs;
  }, everyMs);
  return () => {
    clearInterval(timer);
    return waits.sort((a, b) => a - b);
  };
}

async function main(): Promise<void> {
  installCleanupHandlers();
  const dir = makeTemp('prune');
  const file = path.join(dir, 'gatehouse.db');
  const { openDatabase } = (await dist('db/open.js')) as DistOpen;
  const { migrateToLatest } = (await dist('db/migrate.js')) as DistMigrate;
  const { createKyselySessionStore } = (await dist('sessions/session-store.js')) as DistSessions;
  const at = Date.now();
  const cut = at - absoluteMaxAgeMs;

  let opened = openDatabase(file);
  await migrateToLatest(opened.db);
  await opened.db.destroy();
  seed(file, at);

  const before = oldPruneMs(file, cut);
  log(`old prune (rolled back): ${before.rows} rows in one statement, ${round(before.ms)} ms`);

  opened = openDatabase(file);
  let started = now();
  await migrateToLatest(opened.db);
  const migrationMs = now() - started;
  log(`migration 007 on this store: ${Math.round(migrationMs)} ms`);

  const count = () =>
    Number((opened.sqlite?.prepare('select count(*) as n from sessions').get() as { n: number }).n);
  const rowsBefore = count();
  const userId = (opened.sqlite?.prepare('select id from users limit 1').get() as { id: string })
    .id;
  const store = createKyselySessionStore(opened.db, { sqlite: opened.sqlite });
  if (process.env.PRUNE_WAL_AUTOCHECKPOINT !== undefined)
    opened.sqlite?.exec(
      `pragma wal_autocheckpoint = ${Number(process.env.PRUNE_WAL_AUTOCHECKPOINT)}`,
    );
  const stopProbe = signInProbe(opened.sqlite as DatabaseSync, userId);
  const statements: { ms: number; rows: number }[] = [];
  const checkpoints: number[] = [];
  started = now();
  await store.prune(cut, (ms, rows, checkpointMs) => {
    statements.push({ ms, rows });
    if (checkpointMs !== undefined) checkpoints.push(checkpointMs);
  });
  checkpoints.sort((a, b) => a - b);
  const pruneMs = now() - started;
  const probeWaits = stopProbe();
  const deleted = rowsBefore - count() + probeWaits.length;
  const batches = statements.length;
  const statementMs = statements.map((s) => s.ms).sort((a, b) => a - b);
  const statementRows = statements.map((s) => s.rows).sort((a, b) => a - b);
  const at_ = (list: number[], q: number) =>
    list[Math.min(list.length - 1, Math.floor(q * list.length))] ?? 0;
  started = now();
  await store.prune(cut);
  const idleMs = now() - started;
  await opened.db.destroy();

  const sqlite = new DatabaseSync(file);
  for (const index of migration007Indexes) sqlite.exec(`drop index if exists ${index}`);
  sqlite.close();
  const oldIdle = oldPruneMs(file, cut);

  const quantile = (q: number) =>
    probeWaits[Math.min(probeWaits.length - 1, Math.floor(q * probeWaits.length))] ?? 0;
  const rows: [string, string, string][] = [
    ['store', `${users} users, ${users * sessionsPerUser} sessions`, ''],
    [
      'prune, old statement (one OR, no index), backlog',
      `${before.rows} rows`,
      `${round(before.ms)} ms holding the writer`,
    ],
    ['migration 007 (index builds)', '', `${Math.round(migrationMs)} ms, once`],
    [
      'prune, batched, backlog',
      `${deleted} rows, ≈${batches} statements`,
      `${Math.round(pruneMs)} ms in all`,
    ],
    [
      '… each statement: time holding the writer',
      `${batches} statements`,
      `mean ${round(statementMs.reduce((a, b) => a + b, 0) / Math.max(1, batches))} ms, p50 ${round(at_(statementMs, 0.5))} ms, p99 ${round(at_(statementMs, 0.99))} ms, max ${round(statementMs.at(-1) ?? 0)} ms`,
    ],
    [
      '… each checkpoint between statements (a turn of its own)',
      `${checkpoints.length} checkpoints`,
      `mean ${round(checkpoints.reduce((a, b) => a + b, 0) / Math.max(1, checkpoints.length))} ms, p50 ${round(at_(checkpoints, 0.5))} ms, p99 ${round(at_(checkpoints, 0.99))} ms, max ${round(checkpoints.at(-1) ?? 0)} ms`,
    ],
    [
      '… rows per statement (sized from the last one)',
      '',
      `p50 ${at_(statementRows, 0.5)}, min ${statementRows[0] ?? 0}, max ${statementRows.at(-1) ?? 0}`,
    ],
    [
      "… a sign-in's write every 2 ms during it: its wait",
      `${probeWaits.length} writes`,
      `p50 ${round(quantile(0.5))} ms, p99 ${round(quantile(0.99))} ms, max ${round(probeWaits.at(-1) ?? 0)} ms`,
    ],
    ['prune, batched, nothing to delete', '', `${round(idleMs)} ms`],
    [
      'prune, old statement, nothing to delete',
      `${oldIdle.rows} rows`,
      `${round(oldIdle.ms)} ms holding the writer`,
    ],
  ];
  const lines = [
    '| what | rows | time |',
    '| --- | --- | --- |',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
