import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { createLastSeen, lastSeenEveryMs } from '../../src/sessions/last-seen.js';
import { createKyselyUserStore } from '../../src/users/kysely-store.js';
import { databaseBackends, openMigrated } from '../helpers/backends.js';

const [sqlite] = databaseBackends('last-seen');

describe('"last seen" of sessions', () => {
  let db: Kysely<Database>;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigrated(sqlite!));
  });
  afterAll(() => close());

  it('is noted in memory on a read and written at most once per interval, by the flush', async () => {
    const user = await createKyselyUserStore(db).create({
      email: 'ada@example.com',
      name: 'Ada',
      passwordHash: 'x',
    });
    const row = (id: string) => ({
      id,
      user_id: user!.id,
      created_at: 1,
      public_id: id.repeat(16),
    });
    await db
      .insertInto('sessions')
      .values([row('a'), row('b')])
      .execute();
    let now = 1_000_000;
    const lastSeen = createLastSeen({ db, now: () => now });
    const seenAt = async () =>
      Object.fromEntries(
        (await db.selectFrom('sessions').select(['id', 'last_seen_at']).execute()).map((r) => [
          r.id,
          r.last_seen_at === null ? null : Number(r.last_seen_at),
        ]),
      );
    lastSeen.seen('a', now);
    lastSeen.seen('a', now + 1000);
    // Nothing is written on the read itself.
    expect(await seenAt()).toEqual({ a: null, b: null });
    now += 2000;
    await lastSeen.stop();
    expect(await seenAt()).toEqual({ a: now, b: null });
    // Within the interval a read queues nothing; past it, one write again.
    const first = now;
    lastSeen.seen('a', now + 1000);
    await lastSeen.stop();
    expect(await seenAt()).toEqual({ a: first, b: null });
    now = first + lastSeenEveryMs;
    lastSeen.seen('a', now);
    lastSeen.seen('b', now);
    await lastSeen.stop();
    expect(await seenAt()).toEqual({ a: now, b: now });
  });
});
