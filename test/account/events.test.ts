import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceMaxLength, listEvents, record } from '../../src/account/events.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/schema.js';
import { createKyselyUserStore } from '../../src/users/kysely-store.js';
import { createTestDatabase, hasPostgres } from '../helpers/postgres.js';

const backends = [
  {
    name: 'SQLite',
    skip: false,
    async create() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-events-'));
      return {
        url: `file:${path.join(dir, 'events.db')}`,
        dispose: async () => fs.rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    skip: !hasPostgres,
    async create() {
      const database = await createTestDatabase();
      return { url: database.url, dispose: () => database.drop() };
    },
  },
];

describe.each(backends)('the account event record on $name', ({ skip, create }) => {
  let db: Kysely<Database>;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    if (skip) return;
    const created = await create();
    dispose = created.dispose;
    db = openDatabase(created.url).db;
    await migrateToLatest(db);
  });
  afterAll(async () => {
    if (skip) return;
    await db.destroy();
    await dispose();
  });

  it.skipIf(skip)(
    'lists a user’s own events newest first, 90 days back, by the database clock',
    async () => {
      const users = createKyselyUserStore(db);
      const ada = await users.create({ email: 'ada@example.com', name: 'Ada', passwordHash: 'x' });
      const bob = await users.create({ email: 'bob@example.com', name: 'Bob', passwordHash: 'x' });
      if (ada === null || bob === null) throw new Error('no users');
      const client = { ip: '2001:db8::1', device: 'x'.repeat(1000) };
      await record(db, { ...client, userId: ada.id, type: 'signin' });
      await record(db, { ...client, userId: bob.id, type: 'signin' });
      await record(db, { ...client, userId: ada.id, type: 'signout', detail: { a: 1 } });
      await db
        .insertInto('account_events')
        .values({
          id: 'old',
          user_id: ada.id,
          type: 'signin',
          at: Date.now() - 91 * 86_400_000,
          ip: '',
          device: '',
          detail: null,
        })
        .execute();
      const listed = await listEvents(db, ada.id);
      expect(listed.map((event) => event.type)).toEqual(['signout', 'signin']);
      expect(listed[0]?.device).toHaveLength(deviceMaxLength);
      expect(Math.abs((listed[0]?.at ?? 0) - Date.now())).toBeLessThan(60_000);
      // Removing the user removes their record.
      await users.remove(ada.id);
      expect(await listEvents(db, ada.id)).toEqual([]);
      expect(await listEvents(db, bob.id)).toHaveLength(1);
    },
  );
});
