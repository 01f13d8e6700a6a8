import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceMaxLength, listEvents, record } from '../../src/account/model/events.js';
import type { Database } from '../../src/db/schema.js';
import { createKyselyUserStore } from '../../src/users/kysely-store.js';
import { databaseBackends, openMigrated } from '../helpers/backends.js';

const backends = databaseBackends('events');

describe.each(backends)('the account event record on $name', ({ skip, create }) => {
  let db: Kysely<Database>;
  let close: () => Promise<void>;

  beforeAll(async () => {
    if (skip) return;
    ({ db, close } = await openMigrated({ create }));
  });
  afterAll(async () => {
    if (!skip) await close();
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
