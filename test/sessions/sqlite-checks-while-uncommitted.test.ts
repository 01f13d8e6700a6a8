import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchSqliteCommits } from '../../src/db/sqlite-commit-watch.js';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

// On SQLite a session's check is kept while nothing is committed to the file (src/sessions/
// sqlite-checks-while-uncommitted.ts). A change made anywhere else, by another connection or another
// process, must still show on the very next read.
describe('session checks kept while nothing is committed', () => {
  let server: TestServer;
  let other: DatabaseSync;
  const password = 'correct horse battery staple';
  beforeAll(async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password, 'Ada');
    // Another connection to the same file, as another worker, the CLI or a hand edit would be.
    other = new DatabaseSync(path.join(server.dir, 'test.db'));
  });
  afterAll(async () => {
    other.close();
    await server.close();
  });

  async function signedIn() {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', password);
    return client;
  }
  const session = async (client: Client) =>
    (await (await client.get('/api/auth/session')).json()) as { user?: { name: string } } | null;

  it('a revocation written by another connection ends the session on the next read', async () => {
    const client = await signedIn();
    expect(await session(client)).toMatchObject({ user: { name: 'Ada' } });
    expect(await session(client)).toMatchObject({ user: { name: 'Ada' } });
    other.prepare('update sessions set revoked_at = ? where revoked_at is null').run(Date.now());
    expect(await session(client)).toBeNull();
  });

  it('a rename and a disable by another connection show on the next read', async () => {
    const client = await signedIn();
    expect(await session(client)).toMatchObject({ user: { name: 'Ada' } });
    other.prepare("update users set name = 'Ada Lovelace'").run();
    expect(await session(client)).toMatchObject({ user: { name: 'Ada Lovelace' } });
    other.prepare('update users set disabled = 1').run();
    expect(await session(client)).toBeNull();
    other.prepare('update users set disabled = 0').run();
  });

  it('a revocation is seen while the service holds a transaction open, and after it rolls back', async () => {
    const client = await signedIn();
    expect(await session(client)).not.toBeNull();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A transaction on the service's own connection that has read (its snapshot is taken) and
    // then waits, as one does for another process's lock: a check run inside it would see that
    // snapshot, older than the revocation below, and keep it.
    const held = server.db
      .transaction()
      .execute(async (trx) => {
        await trx.selectFrom('sessions').select('id').execute();
        await gate;
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await session(client)).toMatchObject({ user: { name: 'Ada Lovelace' } });
      other.prepare('update sessions set revoked_at = ? where revoked_at is null').run(Date.now());
      expect(await session(client)).toBeNull();
    } finally {
      release();
      await held;
    }
    expect(await session(client)).toBeNull();
    const again = await signedIn();
    expect(await session(again)).toMatchObject({ user: { name: 'Ada Lovelace' } });
  });

  it('a checkpoint that restarts the log is a change too, and reads stay right after it', async () => {
    const client = await signedIn();
    expect(await session(client)).not.toBeNull();
    other.exec('pragma wal_checkpoint(TRUNCATE)');
    expect(await session(client)).not.toBeNull();
    other.prepare('update sessions set revoked_at = ? where revoked_at is null').run(Date.now());
    expect(await session(client)).toBeNull();
  });
});

describe('the wal-index header watch', () => {
  it('sees every commit by any connection, and nothing else', () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'gatehouse-commit-watch-'));
    const file = path.join(dir, 'db.sqlite');
    const a = new DatabaseSync(file);
    a.exec('pragma journal_mode = WAL');
    a.exec('create table t (v text)');
    const b = new DatabaseSync(file);
    const watch = watchSqliteCommits(file);
    try {
      expect(watch.look()).toBe('changed');
      expect(watch.look()).toBe('same');
      a.prepare('select * from t').all();
      b.exec("update t set v = 'none' where v = 'missing'");
      expect(watch.look()).toBe('same');
      b.exec("insert into t values ('x')");
      expect(watch.look()).toBe('changed');
      a.exec("insert into t values ('y')");
      expect(watch.look()).toBe('changed');
      expect(watch.look()).toBe('same');
      watch.close();
      expect(watch.look()).toBe('unknown');
    } finally {
      a.close();
      b.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is unknown, never same, for a database without a wal-index', () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'gatehouse-commit-watch-'));
    const watch = watchSqliteCommits(path.join(dir, 'missing.sqlite'));
    expect(watch.look()).toBe('unknown');
    expect(watch.look()).toBe('unknown');
    watch.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
