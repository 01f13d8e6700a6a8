import type { Kysely } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { record } from '../../src/account/model/events.js';
import {
  forgetPlacesSince,
  markSeen,
  placeKeptMs,
  placeOf,
  seenBefore,
} from '../../src/account/new-device/places.js';
import { createSignInRecord } from '../../src/account/new-device/sign-in-record.js';
import { pagePathsUnder } from '../../src/account/paths.js';
import { pruneAccountRecords } from '../../src/account/wing.js';
import type { Database } from '../../src/db/schema.js';
import type { MailRequest } from '../../src/mail/mail-queue.js';
import { createKyselyUserStore } from '../../src/users/kysely-store.js';
import { databaseBackends, databasePerTest } from '../helpers/backends.js';

/*
 * The devices and networks an account signed in from (src/account/new-device/), on both
 * backends: how an account without any is judged (an upgrade), that a device is added once,
 * the bounds, what a lock and the prune forget, and the new-device mail budget. The behaviour
 * over HTTP is test/account/new-device-notice.test.ts's.
 */

const backends = databaseBackends('places');
const now = Date.UTC(2026, 4, 1, 9, 30);
const client = { ip: '203.0.113.7', device: 'Firefox' };

describe.each(backends)('sign-in places on $name', (backend) => {
  const skip = backend.skip;
  const database = databasePerTest(backend);
  let db: Kysely<Database>;
  beforeEach(() => {
    if (!skip) db = database();
  });

  async function user(email: string): Promise<string> {
    const made = await createKyselyUserStore(db).create({ email, name: '', passwordHash: 'x' });
    if (made === null) throw new Error('no user');
    return made.id;
  }

  const places = (userId: string) =>
    db
      .selectFrom('sign_in_places')
      .select(['kind', 'key'])
      .where('user_id', '=', userId)
      .orderBy('kind')
      .orderBy('key')
      .execute();

  it.skipIf(skip)(
    'an account without places is judged by its record: first only without a sign-in there, its networks known, its device only by a cookie that verified',
    async () => {
      const userId = await user('ada@example.com');
      const place = placeOf(userId, 'device-one-0123456789a', '198.51.100.9');
      expect(await seenBefore(db, place, false)).toEqual({
        first: true,
        device: false,
        network: false,
      });
      await record(db, { userId, type: 'signin', ip: '198.51.100.200', device: 'x' });
      expect(await seenBefore(db, place, true)).toEqual({
        first: false,
        device: true,
        network: true,
      });
      const elsewhere = placeOf(userId, 'device-one-0123456789a', '2001:db8:1::1');
      expect(await seenBefore(db, elsewhere, false)).toEqual({
        first: false,
        device: false,
        network: false,
      });
      // Once it has places, they alone answer: the verified cookie no longer stands for one.
      expect(await markSeen(db, place, now)).toBe(true);
      expect(await seenBefore(db, elsewhere, true)).toEqual({
        first: false,
        device: true,
        network: false,
      });
      expect(await seenBefore(db, placeOf(userId, 'another', '198.51.100.1'), true)).toEqual({
        first: false,
        device: false,
        network: true,
      });
    },
  );

  it.skipIf(skip)(
    'adds a device once, keyed apart per account, and keeps 100 of each kind at most',
    async () => {
      const userId = await user('bob@example.com');
      const other = await user('cy@example.com');
      const place = placeOf(userId, 'shared-browser-0123456', '203.0.113.7');
      expect(await markSeen(db, place, now)).toBe(true);
      expect(await markSeen(db, place, now + 1)).toBe(false);
      // The same browser under another account is another row, and no key matches across.
      const theirs = placeOf(other, 'shared-browser-0123456', '203.0.113.7');
      expect(theirs.deviceKey).not.toBe(place.deviceKey);
      expect(await markSeen(db, theirs, now)).toBe(true);
      expect(await places(userId)).toEqual([
        { kind: 'device', key: place.deviceKey },
        { kind: 'network', key: '203.0.113.0/24' },
      ]);
      for (let n = 1; n <= 100; n += 1)
        await markSeen(db, placeOf(userId, `device-${n}`, `10.0.${n}.1`), now + 1000 + n);
      const kept = await places(userId);
      expect(kept.filter((row) => row.kind === 'device')).toHaveLength(100);
      expect(kept.filter((row) => row.kind === 'network')).toHaveLength(100);
      // The longest unseen went: the first device and network.
      expect(kept).not.toContainEqual({ kind: 'device', key: place.deviceKey });
      expect(kept).not.toContainEqual({ kind: 'network', key: '203.0.113.0/24' });
    },
  );

  it.skipIf(skip)(
    'a lock forgets what was first seen since its link; the prune what was unseen for a year',
    async () => {
      const userId = await user('dee@example.com');
      const old = placeOf(userId, 'old-device', '203.0.113.1');
      const since = placeOf(userId, 'new-device', '198.51.100.1');
      await markSeen(db, old, now - 1000);
      await markSeen(db, since, now);
      await markSeen(db, old, now + 5);
      await forgetPlacesSince(db, userId, now);
      expect(await places(userId)).toEqual([
        { kind: 'device', key: old.deviceKey },
        { kind: 'network', key: '203.0.113.0/24' },
      ]);
      // The wing's periodic prune, a year after they were last seen and a moment later.
      await pruneAccountRecords(db, now + 5 + placeKeptMs);
      expect(await places(userId)).toHaveLength(2);
      await pruneAccountRecords(db, now + 6 + placeKeptMs);
      expect(await places(userId)).toEqual([]);
    },
  );

  it.skipIf(skip)(
    "records every new device but mails past the account's budget none: the event says why",
    async () => {
      const userId = await user('eve@example.com');
      const mails: MailRequest[] = [];
      const signIn = createSignInRecord({
        db,
        notice: true,
        mail: { enabled: true, enqueue: (_db, mail) => Promise.resolve(void mails.push(mail)) },
        pages: pagePathsUnder(undefined),
        budget: { max: 2, windowSeconds: 900 },
        now: () => now,
        log: { info: () => undefined },
      });
      const device = (id: string) => ({ id, cookieVerified: false, origin: 'https://auth.test' });
      await signIn({ userId, device: device('first') }, client);
      for (const n of [1, 2, 3])
        await signIn({ userId, device: device(`away-${n}`) }, { ...client, ip: `192.0.${n}.9` });
      const notices = await db
        .selectFrom('account_events')
        .select('detail')
        .where('user_id', '=', userId)
        .where('type', '=', 'signin_new_device')
        .orderBy('id')
        .execute();
      expect(notices.map((row) => JSON.parse(row.detail ?? '{}') as unknown)).toEqual([
        { network: '192.0.1.0/24', notice: 'mailed' },
        { network: '192.0.2.0/24', notice: 'mailed' },
        { network: '192.0.3.0/24', notice: 'over_budget' },
      ]);
      expect(mails.map((mail) => [mail.kind, mail.to, mail.values.network])).toEqual([
        ['new-device-notice', 'eve@example.com', '192.0.1.0/24'],
        ['new-device-notice', 'eve@example.com', '192.0.2.0/24'],
      ]);
      expect(mails[0]?.values).toMatchObject({
        signedInAt: '1 May 2026, 09:30 UTC',
        deviceName: 'Firefox',
        lockLink: expect.stringMatching(/^https:\/\/auth\.test\/account\/lock\?token=[\w-]{43}$/),
      });
    },
  );

  it.skipIf(skip)(
    'with mail off, records the new device and mails nothing; turned off, records neither',
    async () => {
      const userId = await user('fay@example.com');
      const settings = {
        db,
        mail: undefined,
        pages: pagePathsUnder(undefined),
        budget: { max: 10, windowSeconds: 900 },
        now: () => now,
        log: { info: () => undefined },
      };
      const device = (id: string) => ({ id, cookieVerified: false, origin: 'https://auth.test' });
      const off = createSignInRecord({ ...settings, notice: false });
      const on = createSignInRecord({ ...settings, notice: true });
      await on({ userId, device: device('first') }, client);
      await off({ userId, device: device('second') }, { ...client, ip: '192.0.2.1' });
      await on({ userId, device: device('third') }, { ...client, ip: '192.0.2.200' });
      await on({ userId, device: device('fourth') }, { ...client, ip: '2001:db8::1' });
      const events = await db
        .selectFrom('account_events')
        .select(['type', 'detail'])
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute();
      // Off, the places were still kept: the next sign-in from that network is no new one.
      expect(events.map((row) => [row.type, row.detail])).toEqual([
        ['signin', null],
        ['signin', null],
        ['signin', null],
        ['signin', null],
        ['signin_new_device', '{"network":"2001:db8::/48","notice":"mail_off"}'],
      ]);
    },
  );
});
