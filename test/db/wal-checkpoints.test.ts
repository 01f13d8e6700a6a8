import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteInBatches } from '../../src/db/delete-in-batches.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/schema.js';
import { beginPrunePacing } from '../../src/db/wal-checkpoints.js';

// While a prune pass runs on a SQLite file, SQLite's automatic checkpoint is off (a worker
// thread checkpoints instead). Left off, the write-ahead log would grow without bound: every
// way passes overlap must leave it on at SQLite's default once the last one ends.
describe('prune passes and SQLite checkpoints', () => {
  let dir: string;
  let db: Kysely<Database>;
  const setting = async () =>
    (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows[0]
      ?.wal_autocheckpoint;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-wal-'));
    db = openDatabase(`file:${path.join(dir, 'wal.db')}`).db;
  });
  afterAll(async () => {
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a pass that begins while the last one is still ending keeps it off, and its own end turns it back on', async () => {
    const first = await beginPrunePacing(db);
    expect(first).toBeDefined();
    await first!.checkpoint(); // starts the worker: the end waits for it to stop
    expect(await setting()).toBe(0);
    const ending = first!.end();
    const second = await beginPrunePacing(db);
    await ending;
    expect(await setting()).toBe(0);
    await second!.end();
    expect(await setting()).toBe(1000);
  });

  it('passes over several batches of real rows, side by side, end with it on and every row gone', async () => {
    await sql`create table if not exists scratch (id integer primary key, body text)`.execute(db);
    const rows = Array.from({ length: 600 }, (_, i) => `(${i}, '${'x'.repeat(200)}')`).join(',');
    await sql.raw(`insert into scratch (id, body) values ${rows}`).execute(db);
    const prune = (odd: number) =>
      deleteInBatches(db, (limit) =>
        sql`delete from scratch where id in (select id from scratch where id % 2 = ${odd} limit ${limit})`
          .execute(db)
          .then((result) => ({ numDeletedRows: result.numAffectedRows ?? 0n })),
      );
    expect(await Promise.all([prune(0), prune(1)])).toEqual([300, 300]);
    expect(await setting()).toBe(1000);
  });
});
