import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import {
  addUser,
  disableUser,
  enableUser,
  removeUser,
  renameUser,
  revokeUserSessionsNow,
  setUserEmail,
  setUserPassword,
  unlockEmail,
  verifyUserEmail,
  type Actor,
} from '../../src/operator/operations.js';
import type { User } from '../../src/users/store.js';
import { databaseBackends, openMigrated } from '../helpers/backends.js';

const actor: Actor = { label: 'admin token ops-1' };

/** What the operations leave behind for one user: the row, its sessions, its events. */
async function stateOf(db: Kysely<Database>, userId: string) {
  const user = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  const sessions = await db
    .selectFrom('sessions')
    .select(['id', 'revoked_at'])
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
  const events = await db
    .selectFrom('account_events')
    .select(['type', 'ip', 'device', 'detail'])
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
  return {
    user:
      user === undefined
        ? undefined
        : { ...user, credential_version: Number(user.credential_version) },
    live: sessions.filter((session) => session.revoked_at === null).length,
    events: events.map((event) => ({
      ...event,
      detail: event.detail === null ? null : (JSON.parse(event.detail) as unknown),
    })),
  };
}

/**
 * Runs `work` while the events table cannot take a row: the event's insert fails after the
 * change was written in the same transaction, the failure in the middle the promise is about.
 */
async function withEventsRefused<T>(db: Kysely<Database>, work: () => Promise<T>) {
  await sql`alter table account_events rename to account_events_away`.execute(db);
  try {
    return await work();
  } finally {
    await sql`alter table account_events_away rename to account_events`.execute(db);
  }
}

describe.each(databaseBackends('operator'))('operator operations on $name', ({ skip, create }) => {
  let db: Kysely<Database>;
  let close: () => Promise<void>;
  let unlocked: string[];
  let clock: number;
  let ports: {
    db: Kysely<Database>;
    now: () => number;
    throttle: {
      unlockEmail(email: string): Promise<void>;
      emailLockedUntil(email: string, now: number): Promise<number | null>;
    };
  };
  let ada: User;

  beforeAll(async () => {
    if (skip) return;
    ({ db, close } = await openMigrated({ create }));
  });
  afterAll(async () => {
    if (!skip) await close();
  });

  // A fresh user with two live sessions for every case.
  beforeEach(async () => {
    if (skip) return;
    unlocked = [];
    clock = 1_700_000_000_000;
    ports = {
      db,
      now: () => clock,
      throttle: {
        unlockEmail: async (email) => {
          unlocked.push(email);
        },
        emailLockedUntil: async (email) => (email === 'locked@example.com' ? clock + 60_000 : null),
      },
    };
    const added = await addUser(ports, {
      email: `ada-${randomUUID()}@example.com`,
      name: 'Ada',
      passwordHash: 'old-hash',
      verified: false,
      actor,
    });
    if (added === 'taken') throw new Error('taken');
    ada = added;
    await db
      .insertInto('sessions')
      .values([0, 1].map(() => ({ id: randomUUID(), user_id: ada.id, created_at: clock })))
      .execute();
  });

  // Each operation that records an event: how to run it, its event, and what the change is.
  const recorded: {
    name: string;
    run: (userId: string) => Promise<unknown>;
    event: { type: string; detail: Record<string, unknown> };
    changed: (state: Awaited<ReturnType<typeof stateOf>>) => boolean;
  }[] = [
    {
      name: 'disable',
      run: (userId) => disableUser(ports, { userId, actor }),
      event: { type: 'session_revoked', detail: { reason: 'disabled' } },
      changed: ({ user, live }) => user?.disabled === 1 && live === 0,
    },
    {
      name: 'set-email',
      run: (userId) =>
        setUserEmail(ports, {
          userId,
          email: `moved-${userId}@example.com`,
          verified: true,
          actor,
        }),
      event: { type: 'email_changed', detail: { reason: 'set-email' } },
      changed: ({ user, live }) =>
        user?.email.startsWith('moved-') === true && user.email_verified_at !== null && live === 0,
    },
    {
      name: 'set-password',
      run: (userId) => setUserPassword(ports, { userId, passwordHash: 'new-hash', actor }),
      event: { type: 'password_changed', detail: { reason: 'set-password' } },
      changed: ({ user, live }) => user?.password_hash === 'new-hash' && live === 0,
    },
    {
      name: 'revoke-sessions',
      run: (userId) => revokeUserSessionsNow(ports, { userId, actor }),
      event: { type: 'session_revoked', detail: { sessions: 2 } },
      changed: ({ live }) => live === 0,
    },
  ];

  it.skipIf(skip).each(recorded)(
    '$name commits its change and exactly one event naming the actor, never a client address',
    async ({ run, event, changed }) => {
      const before = await stateOf(db, ada.id);
      expect(changed(before)).toBe(false);
      expect(await run(ada.id)).toMatchObject({});
      const after = await stateOf(db, ada.id);
      expect(changed(after)).toBe(true);
      expect(after.events).toEqual([
        {
          type: event.type,
          ip: '',
          device: actor.label,
          detail: { by: actor.label, ...event.detail },
        },
      ]);
    },
  );

  it.skipIf(skip).each(recorded)(
    '$name leaves neither the change nor the event when the event cannot be written',
    async ({ run }) => {
      const before = await stateOf(db, ada.id);
      await expect(withEventsRefused(db, () => run(ada.id))).rejects.toThrow();
      expect(await stateOf(db, ada.id)).toEqual(before);
      // The lock on the email is lifted only after a commit.
      expect(unlocked).toEqual([]);
    },
  );

  it.skipIf(skip).each(recorded)(
    '$name answers missing for an unknown user and writes nothing',
    async ({ run }) => {
      const events = await db.selectFrom('account_events').select('id').execute();
      expect(await run(randomUUID())).toBe('missing');
      expect(await db.selectFrom('account_events').select('id').execute()).toEqual(events);
    },
  );

  it.skipIf(skip)('set-email to a taken address answers taken and writes nothing', async () => {
    const bob = await addUser(ports, {
      email: `bob-${randomUUID()}@example.com`,
      name: 'Bob',
      passwordHash: 'x',
      verified: false,
      actor,
    });
    if (bob === 'taken') throw new Error('taken');
    const before = await stateOf(db, ada.id);
    expect(
      await setUserEmail(ports, { userId: ada.id, email: bob.email, verified: true, actor }),
    ).toBe('taken');
    expect(await stateOf(db, ada.id)).toEqual(before);
  });

  it.skipIf(skip)(
    'set-password and enable answer with the user after the change and lift the lock on its email after the commit',
    async () => {
      const set = await setUserPassword(ports, { userId: ada.id, passwordHash: 'new-hash', actor });
      expect(set).toMatchObject({ id: ada.id, passwordHash: 'new-hash' });
      expect((set as User).credentialVersion).toBe(ada.credentialVersion + 1);
      expect(unlocked).toEqual([ada.email]);
      await disableUser(ports, { userId: ada.id, actor });
      const enabled = await enableUser(ports, { userId: ada.id, actor });
      expect(enabled).toMatchObject({ id: ada.id, disabled: false });
      expect(unlocked).toEqual([ada.email, ada.email]);
      // Enabling records nothing: AccountEventType has no type for it.
      expect((await stateOf(db, ada.id)).events.map((event) => event.type)).toEqual([
        'password_changed',
        'session_revoked',
      ]);
    },
  );

  it.skipIf(skip)('add with verified commits the user and the verification together', async () => {
    const email = `vera-${randomUUID()}@example.com`;
    const added = await addUser(ports, {
      email,
      name: 'Vera',
      passwordHash: 'x',
      verified: true,
      actor,
    });
    if (added === 'taken') throw new Error('taken');
    expect((await stateOf(db, added.id)).user?.email_verified_at).toBe(clock);
    expect(
      await addUser(ports, { email, name: 'Again', passwordHash: 'y', verified: true, actor }),
    ).toBe('taken');
  });

  it.skipIf(skip)(
    'verify-email says whether it changed anything, and records no event',
    async () => {
      expect(await verifyUserEmail(ports, { userId: ada.id, actor })).toMatchObject({
        changed: true,
      });
      expect(await verifyUserEmail(ports, { userId: ada.id, actor })).toMatchObject({
        changed: false,
      });
      expect(await verifyUserEmail(ports, { userId: randomUUID(), actor })).toBe('missing');
      const state = await stateOf(db, ada.id);
      expect(state.user?.email_verified_at).toBe(clock);
      expect(state.events).toEqual([]);
    },
  );

  it.skipIf(skip)('rename and remove answer with the user, or missing', async () => {
    expect(await renameUser(ports, { userId: ada.id, name: 'Ada L.', actor })).toMatchObject({
      name: 'Ada L.',
    });
    expect(await renameUser(ports, { userId: randomUUID(), name: 'X', actor })).toBe('missing');
    expect(await removeUser(ports, { userId: ada.id, actor })).toMatchObject({ id: ada.id });
    const gone = await stateOf(db, ada.id);
    expect(gone).toEqual({ user: undefined, live: 0, events: [] });
    expect(await removeUser(ports, { userId: ada.id, actor })).toBe('missing');
  });

  it.skipIf(skip)(
    'revoke-sessions counts the ended sessions in the metrics once they are committed',
    async () => {
      const counted: [string, number][] = [];
      const observer = {
        sessionsRevoked: (reason: string, n: number) => counted.push([reason, n]),
      };
      await expect(
        withEventsRefused(db, () =>
          revokeUserSessionsNow({ ...ports, observer }, { userId: ada.id, actor }),
        ),
      ).rejects.toThrow();
      expect(counted).toEqual([]);
      expect(
        await revokeUserSessionsNow({ ...ports, observer }, { userId: ada.id, actor }),
      ).toMatchObject({ revoked: 2 });
      expect(counted).toEqual([['user', 2]]);
    },
  );

  it.skipIf(skip)('unlock says whether a lock was in force, with or without a user', async () => {
    expect(await unlockEmail(ports, { email: 'locked@example.com', actor })).toEqual({
      lockedUntil: clock + 60_000,
    });
    expect(await unlockEmail(ports, { email: 'free@example.com', actor })).toEqual({
      lockedUntil: null,
    });
    expect(unlocked).toEqual(['locked@example.com', 'free@example.com']);
  });
});
