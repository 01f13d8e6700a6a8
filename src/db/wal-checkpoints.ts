import { Worker } from 'node:worker_threads';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/*
 * SQLite copies its write-ahead log back into the database file (a checkpoint) when a commit
 * finds the log past 1,000 pages: inside that commit, on the event loop, with two fsyncs. Under a
 * prune that commit is one of its batches, which then held the loop for 46 ms at p99 and 129 ms
 * at worst instead of 4; taken between batches on the loop, each checkpoint still held it for
 * 11 ms, most of it the fsyncs (docs/performance.md, "Pruning"). So while a prune pass deletes
 * more than one batch, the automatic checkpoint is off and a worker thread with a connection of
 * its own takes them: a PASSIVE checkpoint never blocks the service's connection, which goes on
 * reading and writing. The worker lives only as long as the pass (a thread costs about 20 MB),
 * and if it cannot run, the pass checkpoints between its batches on the loop instead.
 */

/** How often the worker checkpoints while a pass runs. */
const workerIntervalMs = 25;

// A worker of a few lines, kept as text so it needs no file of its own in the bundle.
const workerSource = `
const { DatabaseSync } = require('node:sqlite');
const { parentPort, workerData } = require('node:worker_threads');
const db = new DatabaseSync(workerData.file, { timeout: 0 });
const checkpoint = () => {
  try { db.exec('pragma wal_checkpoint(PASSIVE)'); } catch { /* busy: the next turn takes it */ }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

/** SQLite stores by their Kysely instance: the file (none for `:memory:`, which has no log). */
const sqliteFiles = new WeakMap<Kysely<Database>, string | null>();

/** SQLite's own default, which the service never changes: where a pass leaves the setting. */
const automaticCheckpointPages = 1000;

interface Pass {
  /** Passes running on the store now. */
  depth: number;
  /** Each change of the setting (and the worker's stop) in order, so they never interleave. */
  settled: Promise<void>;
  worker?: { thread: Worker; exited: Promise<void> };
  /** The worker could not run: checkpoint on the loop. */
  onLoop: boolean;
  /** Told when the last pass has ended and its worker has exited. */
  whenStopped: (() => void)[];
}
const passes = new WeakMap<Kysely<Database>, Pass>();

/** Marks a Kysely instance as SQLite's (src/db/sqlite.ts, when it opens one). */
export function markSqlite(db: Kysely<Database>, file: string): void {
  sqliteFiles.set(db, file === ':memory:' ? null : file);
}

export interface PrunePacing {
  /** Called between batches: the first call starts the worker, or checkpoints on the loop. */
  checkpoint(): Promise<void>;
  /** The pass is over: the automatic checkpoint is back once no other pass runs. */
  end(): Promise<void>;
}

function startWorker(file: string, pass: Pass): void {
  try {
    const worker = new Worker(workerSource, {
      eval: true,
      workerData: { file, intervalMs: workerIntervalMs },
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
    });
    worker.unref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.on('error', () => {
      pass.onLoop = true;
    });
    pass.worker = { thread: worker, exited };
  } catch {
    pass.onLoop = true;
  }
}

/**
 * Resolves once no prune pass runs on `db` and no checkpoint worker of one is alive (at once
 * when none is), so a descriptor on the database's files may be closed without dropping the
 * worker's locks.
 */
export function checkpointWorkersStopped(db: Kysely<Database>): Promise<void> {
  const pass = passes.get(db);
  if (pass === undefined || (pass.depth === 0 && pass.worker === undefined)) {
    return (pass?.settled ?? Promise.resolve()).then(
      () => undefined,
      () => undefined,
    );
  }
  return new Promise((resolve) => pass.whenStopped.push(resolve));
}

/** For a prune pass on `db`: checkpoints off the loop on a SQLite file, nothing elsewhere. */
export async function beginPrunePacing(db: Kysely<Database>): Promise<PrunePacing | undefined> {
  const file = sqliteFiles.get(db);
  if (file === undefined || file === null) return undefined;
  let pass = passes.get(db);
  if (pass === undefined) {
    pass = { depth: 0, settled: Promise.resolve(), onLoop: false, whenStopped: [] };
    passes.set(db, pass);
  }
  const current = pass;
  current.depth += 1;
  // The first pass turns the automatic checkpoint off; one that starts while the last one is
  // still ending waits for that end, then turns it off again.
  if (current.depth === 1) {
    // A failed step is its own pass's error, not every later pass's.
    current.settled = current.settled
      .catch(() => undefined)
      .then(async () => {
        await sql`pragma wal_autocheckpoint = 0`.execute(db);
      });
  }
  await current.settled;
  return {
    async checkpoint() {
      if (current.worker === undefined && !current.onLoop) startWorker(file, current);
      if (current.onLoop) await sql`pragma wal_checkpoint(PASSIVE)`.execute(db);
    },
    async end() {
      current.depth -= 1;
      if (current.depth > 0) return;
      const worker = current.worker;
      delete current.worker;
      current.onLoop = false;
      current.settled = current.settled
        .catch(() => undefined)
        .then(async () => {
          if (worker !== undefined) {
            worker.thread.postMessage('stop');
            await worker.exited;
          }
          // A pass that began meanwhile keeps it off; its own end turns it back on.
          if (current.depth === 0) {
            await sql.raw(`pragma wal_autocheckpoint = ${automaticCheckpointPages}`).execute(db);
          }
        })
        .finally(() => {
          if (current.depth === 0) for (const told of current.whenStopped.splice(0)) told();
        });
      await current.settled;
    },
  };
}
