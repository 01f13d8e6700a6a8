import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createKyselyThrottleStore,
  type ThrottleLimit,
} from '../../src/auth/signin/throttle-store.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import * as credentialVersionMigration from '../../src/db/migrations/002-credential-version.js';
import * as mailOutboxMigration from '../../src/db/migrations/003-mail-outbox.js';
import * as accountsMigration from '../../src/db/migrations/004-accounts.js';
import * as invitationsMigration from '../../src/db/migrations/005-invitations.js';
import * as signupSecretsMigration from '../../src/db/migrations/006-signup-secrets.js';
import * as sessionProofsMigration from '../../src/db/migrations/009-session-proofs.js';
import * as webhookOutboxMigration from '../../src/db/migrations/014-webhook-outbox.js';
import * as factorThrottleMigration from '../../src/db/migrations/016-factor-throttle.js';
import * as identitiesMigration from '../../src/db/migrations/019-identities.js';
import * as importsMigration from '../../src/db/migrations/020-imports.js';
import * as tokensMigration from '../../src/db/migrations/021-tokens.js';
import * as signInPlacesMigration from '../../src/db/migrations/022-sign-in-places.js';
import * as auditLogMigration from '../../src/db/migrations/013-audit-log.js';
import * as totpMigration from '../../src/db/migrations/011-totp.js';
import * as passkeysMigration from '../../src/db/migrations/012-passkeys.js';
import * as pruneIndexesMigration from '../../src/db/migrations/007-prune-indexes.js';
import * as mailPriorityMigration from '../../src/db/migrations/008-mail-priority.js';
import { pruneEvents } from '../../src/account/model/events.js';
import { pruneTokens } from '../../src/account/model/secrets.js';
import { pruneBatchRows } from '../../src/db/delete-in-batches.js';
import { openDatabase, type Dialect } from '../../src/db/open.js';
import type { Database } from '../../src/db/schema.js';
import { createServices } from '../../src/services.js';
import { defaultHashNice } from '../../src/config/index.js';
import { normaliseEmail } from '../../src/users/email.js';
import { pgbouncerBinary, startPgBouncer } from '../helpers/pgbouncer.js';
import { createTestDatabase, hasPostgres, testPostgresUrl } from '../helpers/postgres.js';

/**
 * One contract, every backend: the stores must behave the same on SQLite and PostgreSQL.
 * PostgreSQL runs when TEST_POSTGRES_URL is set (scripts/with-postgres.sh) and is reported as
 * skipped otherwise.
 */
interface Backend {
  name: string;
  dialect: Dialect;
  skip: boolean;
  /** Named prepared statements: off behind PgBouncer in transaction mode. */
  prepared?: boolean;
  create(): Promise<{ url: string; dispose(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'SQLite',
    dialect: 'sqlite',
    skip: false,
    async create() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-contract-'));
      return {
        url: `file:${path.join(dir, 'contract.db')}`,
        dispose: async () => fs.rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    dialect: 'postgres',
    skip: !hasPostgres,
    async create() {
      const database = await createTestDatabase();
      return { url: database.url, dispose: () => database.drop() };
    },
  },
  {
    name: 'PostgreSQL through PgBouncer 1.18 in transaction mode (DATABASE_PREPARED=off)',
    dialect: 'postgres',
    skip: !hasPostgres || pgbouncerBinary === undefined,
    prepared: false,
    async create() {
      const database = await createTestDatabase();
      const bouncer = await startPgBouncer(testPostgresUrl as string);
      return {
        url: bouncer.url(database.name),
        dispose: async () => {
          await bouncer.stop();
          await database.drop();
        },
      };
    },
  },
];

const start = 1_700_000_000_000;
const throttleSettings = {
  emailMaxFailures: 10,
  ipMaxFailures: 100,
  windowSeconds: 900,
  lockSeconds: 900,
};

for (const backend of backends) {
  describe.skipIf(backend.skip)(`store contract on ${backend.name}`, () => {
    let db: Kysely<Database>;
    let dispose: (() => Promise<void>) | undefined;
    let clock = start;
    const now = () => clock;
    let services: ReturnType<typeof createServices>;

    beforeAll(async () => {
      const target = await backend.create();
      dispose = target.dispose;
      const opened = openDatabase(target.url);
      expect(opened.dialect).toBe(backend.dialect);
      db = opened.db;
      await migrateToLatest(db);
      services = createServices(
        db,
        {
          throttle: throttleSettings,
          sessionsPerUserMax: 3,
          databasePrepared: backend.prepared,
          hashConcurrency: 1,
          hashQueueMax: 10,
          hashNice: defaultHashNice,
          sqlite: opened.sqlite,
          pgPool: opened.pgPool,
        },
        now,
      );
    });

    afterAll(async () => {
      await db?.destroy();
      await dispose?.();
    });

    beforeEach(async () => {
      clock = start;
      await db.deleteFrom('sessions').execute();
      await db.deleteFrom('signin_throttle').execute();
      await db.deleteFrom('users').execute();
    });

    const newUser = (email: string, name = 'Ada Lovelace', passwordHash = 'hash-1') => ({
      email: normaliseEmail(email),
      name,
      passwordHash,
    });

    async function createUser(email: string, passwordHash = 'hash-1') {
      const user = await services.users.create(newUser(email, 'Ada Lovelace', passwordHash));
      if (user === null) throw new Error(`${email} exists`);
      return user;
    }

    /** A session for the user's current credential, as a sign-in that just verified it. */
    async function newSession(userId: string, createdAt: number): Promise<string> {
      const user = await services.users.findById(userId);
      const sid =
        user === null
          ? null
          : await services.sessions.create(
              { userId, credentialVersion: user.credentialVersion },
              createdAt,
            );
      if (sid === null) throw new Error(`no session for ${userId}`);
      return sid;
    }

    it('running the migrations a second time changes nothing', async () => {
      await createUser('ada@example.com');
      await migrateToLatest(db);
      expect(await services.users.count()).toBe(1);
    });

    describe('users', () => {
      it('creates a user with the clock’s timestamps and finds it by its normalised email and id', async () => {
        const created = await services.users.create(newUser('  Ada@Example.COM '));
        expect(created).toEqual({
          id: expect.any(String),
          email: 'ada@example.com',
          name: 'Ada Lovelace',
          passwordHash: 'hash-1',
          disabled: false,
          credentialVersion: 0,
          createdAt: start,
          updatedAt: start,
        });
        expect(await services.users.findByEmail(normaliseEmail('ADA@example.com'))).toEqual(
          created,
        );
        expect(await services.users.findById(created?.id ?? '')).toEqual(created);
      });

      it('finds no user for an unknown email or id', async () => {
        await createUser('ada@example.com');
        expect(await services.users.findByEmail('grace@example.com')).toBeNull();
        expect(await services.users.findById('no-such-id')).toBeNull();
      });

      it('refuses a second user with the same email and keeps the first one unchanged', async () => {
        const first = await createUser('ada@example.com');
        const second = await services.users.create(newUser('ADA@example.com', 'Other', 'hash-2'));
        expect(second).toBeNull();
        expect(await services.users.findByEmail('ada@example.com')).toEqual(first);
        expect(await services.users.count()).toBe(1);
      });

      it('creates exactly one user when 100 creations of the same email race, without an error', async () => {
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            services.users.create(newUser('race@example.com', `Racer ${i}`)),
          ),
        );
        const created = results.filter((user) => user !== null);
        expect(created).toHaveLength(1);
        expect(results.filter((user) => user === null)).toHaveLength(99);
        expect(await services.users.count()).toBe(1);
        expect(await services.users.findByEmail('race@example.com')).toEqual(created[0]);
      });

      it('lists users ordered by email and counts them', async () => {
        expect(await services.users.list()).toEqual([]);
        expect(await services.users.count()).toBe(0);
        for (const email of ['carol@example.com', 'alice@example.com', 'bob@example.com']) {
          await createUser(email);
        }
        const listed = await services.users.list();
        expect(listed.map((user) => user.email)).toEqual([
          'alice@example.com',
          'bob@example.com',
          'carol@example.com',
        ]);
        expect(await services.users.count()).toBe(3);
      });

      it('answers false when changing or removing a user that does not exist', async () => {
        await createUser('ada@example.com');
        expect(await services.users.setPasswordHash('no-such-id', 'hash-2')).toBe(false);
        expect(await services.users.setDisabled('no-such-id', true)).toBe(false);
        expect(await services.users.remove('no-such-id')).toBe(false);
        expect(await services.users.count()).toBe(1);
      });

      it('changing the password hash or the disabled flag moves updatedAt and keeps createdAt', async () => {
        const user = await createUser('ada@example.com');
        clock = start + 1000;
        expect(await services.users.setPasswordHash(user.id, 'hash-2')).toBe(true);
        expect(await services.users.findById(user.id)).toMatchObject({
          passwordHash: 'hash-2',
          createdAt: start,
          updatedAt: start + 1000,
        });
        clock = start + 2000;
        expect(await services.users.setDisabled(user.id, true)).toBe(true);
        expect(await services.users.findById(user.id)).toMatchObject({
          disabled: true,
          createdAt: start,
          updatedAt: start + 2000,
        });
        expect(await services.users.setDisabled(user.id, false)).toBe(true);
        expect((await services.users.findById(user.id))?.disabled).toBe(false);
      });

      it('upgrades a password hash only while the old hash is still the stored one, keeping sessions', async () => {
        const user = await createUser('ada@example.com', 'old-hash');
        const sid = await newSession(user.id, clock);
        await services.users.upgradePasswordHash(user.id, 'not-the-stored-hash', 'new-hash');
        expect((await services.users.findById(user.id))?.passwordHash).toBe('old-hash');
        await services.users.upgradePasswordHash(user.id, 'old-hash', 'new-hash');
        expect((await services.users.findById(user.id))?.passwordHash).toBe('new-hash');
        // A concurrent change (the hash moved on) wins over a late upgrade.
        await services.users.upgradePasswordHash(user.id, 'old-hash', 'stale-hash');
        expect((await services.users.findById(user.id))?.passwordHash).toBe('new-hash');
        expect(await services.sessions.findActive(sid)).not.toBeNull();
      });

      it('removes a user, after which it is found neither by email nor by id', async () => {
        const user = await createUser('ada@example.com');
        expect(await services.users.remove(user.id)).toBe(true);
        expect(await services.users.findByEmail('ada@example.com')).toBeNull();
        expect(await services.users.findById(user.id)).toBeNull();
        expect(await services.users.remove(user.id)).toBe(false);
      });
    });

    describe('users: rename and set-email', () => {
      it('rename changes the name only, and reports an unknown id', async () => {
        const ada = await createUser('ada@example.com');
        const sid = await newSession(ada.id, start);
        expect(await services.users.rename(ada.id, 'Countess')).toBe(true);
        expect(await services.users.findById(ada.id)).toMatchObject({
          name: 'Countess',
          email: 'ada@example.com',
          credentialVersion: ada.credentialVersion,
        });
        expect(await services.sessions.findActive(sid)).not.toBeNull();
        expect(await services.users.rename('no-such-user', 'X')).toBe(false);
      });

      it('setEmail moves the user, ends their sessions, and refuses a taken email', async () => {
        const ada = await createUser('ada@example.com');
        await createUser('bob@example.com');
        const sid = await newSession(ada.id, start);
        expect(await services.users.setEmail(ada.id, 'bob@example.com')).toBe('taken');
        expect(await services.sessions.findActive(sid)).not.toBeNull();
        expect(await services.users.setEmail(ada.id, 'ada@new.example')).toBe('changed');
        expect(await services.users.findByEmail('ada@example.com')).toBeNull();
        expect(await services.users.findByEmail('ada@new.example')).toMatchObject({
          id: ada.id,
          credentialVersion: ada.credentialVersion + 1,
        });
        expect(await services.sessions.findActive(sid)).toBeNull();
        expect(await services.users.setEmail('no-such-user', 'x@example.com')).toBe('missing');
      });
    });

    describe('sessions', () => {
      const sessionRows = async (userId: string) =>
        db.selectFrom('sessions').selectAll().where('user_id', '=', userId).execute();

      it('a new session is active and says who its user is', async () => {
        const user = await createUser('ada@example.com');
        const sid = await newSession(user.id, start + 5);
        expect(await services.sessions.findActive(sid)).toEqual({
          userId: user.id,
          email: 'ada@example.com',
          name: 'Ada Lovelace',
          createdAt: start + 5,
        });
        expect(await services.sessions.findActive('no-such-session')).toBeNull();
      });

      it('a session keeps how its sign-in was proved: a password alone unless told more', async () => {
        const user = await createUser('ada@example.com');
        const byPassword = await newSession(user.id, start);
        const twoFactors = await services.sessions.create(
          { userId: user.id, credentialVersion: 0, proofs: ['password', 'otp'] },
          start + 1,
        );
        const proofs = Object.fromEntries(
          (await sessionRows(user.id)).map((row) => [row.id, row.proofs]),
        );
        expect(proofs).toEqual({ [byPassword]: 'password', [twoFactors ?? '']: 'password otp' });
      });

      it('past the per-user cap, a new session ends the oldest live ones of that user only', async () => {
        const ada = await createUser('ada@example.com');
        const grace = await createUser('grace@example.com');
        const graceSid = await newSession(grace.id, start);
        const sids = [];
        for (let i = 0; i < 5; i += 1) sids.push(await newSession(ada.id, start + i));
        const live = await Promise.all(
          sids.map(async (sid) => (await services.sessions.findActive(sid)) !== null),
        );
        expect(live).toEqual([false, false, true, true, true]);
        expect(await services.sessions.findActive(graceSid)).not.toBeNull();
        // A revoked session does not count: revoking one leaves room for a new one.
        await services.sessions.revoke(sids[4]!, start + 10);
        const sixth = await newSession(ada.id, start + 11);
        expect(await services.sessions.findActive(sids[2]!)).not.toBeNull();
        expect(await services.sessions.findActive(sixth)).not.toBeNull();
      });

      it('many checks asked at once each get their own answer, and one revoked just before is seen', async () => {
        // More than one statement's worth on PostgreSQL (batchMaxIds), two sessions per user.
        const users = await Promise.all(
          Array.from({ length: 150 }, (_, i) => createUser(`user${i}@example.com`)),
        );
        const live: { sid: string; userId: string; email: string; createdAt: number }[] = [];
        for (const [i, user] of users.entries()) {
          for (const offset of [0, 1]) {
            const createdAt = start + 2 * i + offset;
            const sid = await newSession(user.id, createdAt);
            live.push({ sid, userId: user.id, email: user.email, createdAt });
          }
        }
        const revoked = live.splice(7, 1)[0]!.sid;
        await services.sessions.revoke(revoked, start + 1000);
        // Asked in one go: live ones (one of them three times), the revoked one, unknown ones.
        const asked = [
          ...live.map((s) => s.sid),
          live[3]!.sid,
          live[3]!.sid,
          revoked,
          'no-such',
          '',
        ];
        const answers = await Promise.all(asked.map((sid) => services.sessions.findActive(sid)));
        const expected = asked.map((sid) => {
          const session = live.find((s) => s.sid === sid);
          return session === undefined
            ? null
            : {
                userId: session.userId,
                email: session.email,
                name: 'Ada Lovelace',
                createdAt: session.createdAt,
              };
        });
        expect(answers).toEqual(expected);
      });

      it('a revoked session is no longer active, and revoking it again is harmless', async () => {
        const user = await createUser('ada@example.com');
        const sid = await newSession(user.id, start);
        const other = await newSession(user.id, start);
        await services.sessions.revoke(sid, start + 1);
        expect(await services.sessions.findActive(sid)).toBeNull();
        await services.sessions.revoke(sid, start + 2);
        expect(await services.sessions.findActive(other)).not.toBeNull();
        expect((await sessionRows(user.id)).find((row) => row.id === sid)?.revoked_at).toBe(
          start + 1,
        );
      });

      it('revoking all of a user’s sessions ends them, counts only the live ones and spares other users', async () => {
        const ada = await createUser('ada@example.com');
        const grace = await createUser('grace@example.com');
        const sids = [
          await newSession(ada.id, start),
          await newSession(ada.id, start),
          await newSession(ada.id, start),
        ];
        await services.sessions.revoke(sids[0] ?? '', start);
        const graces = await newSession(grace.id, start);
        expect(await services.sessions.revokeAllForUser(ada.id, start + 1)).toBe(2);
        for (const sid of sids) expect(await services.sessions.findActive(sid)).toBeNull();
        expect(await services.sessions.findActive(graces)).not.toBeNull();
        expect(await services.sessions.revokeAllForUser(ada.id, start + 2)).toBe(0);
      });

      it('disabling a user ends its sessions, and enabling it again does not bring them back', async () => {
        const user = await createUser('ada@example.com');
        const sid = await newSession(user.id, start);
        await services.users.setDisabled(user.id, true);
        expect(await services.sessions.findActive(sid)).toBeNull();
        await services.users.setDisabled(user.id, false);
        expect(await services.sessions.findActive(sid)).toBeNull();
        const fresh = await newSession(user.id, start + 1);
        expect(await services.sessions.findActive(fresh)).not.toBeNull();
      });

      it('a session of a disabled user is not active even if its row was never revoked', async () => {
        const user = await createUser('ada@example.com');
        const sid = await newSession(user.id, start);
        await db.updateTable('users').set({ disabled: 1 }).where('id', '=', user.id).execute();
        expect(await services.sessions.findActive(sid)).toBeNull();
      });

      it('changing the password ends every session of that user', async () => {
        const user = await createUser('ada@example.com');
        const a = await newSession(user.id, start);
        const b = await newSession(user.id, start);
        clock = start + 10;
        await services.users.setPasswordHash(user.id, 'hash-2');
        expect(await services.sessions.findActive(a)).toBeNull();
        expect(await services.sessions.findActive(b)).toBeNull();
        expect((await sessionRows(user.id)).map((row) => row.revoked_at)).toEqual([
          start + 10,
          start + 10,
        ]);
      });

      it('removing a user deletes its sessions', async () => {
        const user = await createUser('ada@example.com');
        const sid = await newSession(user.id, start);
        await services.users.remove(user.id);
        expect(await services.sessions.findActive(sid)).toBeNull();
        expect(await sessionRows(user.id)).toEqual([]);
      });

      // What an administrator does to the account while a sign-in that verified it is in flight.
      const credentialChanges: [string, (userId: string) => Promise<unknown>][] = [
        ['a password change', (id) => services.users.setPasswordHash(id, 'hash-2')],
        ['a disable', (id) => services.users.setDisabled(id, true)],
        [
          'a disable and an enable',
          async (id) => {
            await services.users.setDisabled(id, true);
            await services.users.setDisabled(id, false);
          },
        ],
        ['an enable of an enabled user', (id) => services.users.setDisabled(id, false)],
        ['a removal', (id) => services.users.remove(id)],
      ];

      it.each(credentialChanges)(
        'after %s, a sign-in that verified the credential before it is issued no session',
        async (_, change) => {
          const user = await createUser('ada@example.com');
          const verified = { userId: user.id, credentialVersion: user.credentialVersion };
          await change(user.id);
          expect(await services.sessions.create(verified, start + 1)).toBeNull();
          expect(await sessionRows(user.id)).toEqual([]);
          const now = await services.users.findById(user.id);
          if (now !== null) expect(now.credentialVersion).toBeGreaterThan(user.credentialVersion);
        },
      );

      it('a disabled user is issued no session, even for its current credential version', async () => {
        const user = await createUser('ada@example.com');
        await services.users.setDisabled(user.id, true);
        const disabled = await services.users.findById(user.id);
        const current = { userId: user.id, credentialVersion: disabled?.credentialVersion ?? -1 };
        expect(await services.sessions.create(current, start)).toBeNull();
        expect(await sessionRows(user.id)).toEqual([]);
      });

      it('a hash upgrade is no credential change: the version stays, and a sign-in that verified the old hash gets its session', async () => {
        const user = await createUser('ada@example.com', 'old-hash');
        const verified = { userId: user.id, credentialVersion: user.credentialVersion };
        const other = await newSession(user.id, start);
        await services.users.upgradePasswordHash(user.id, 'old-hash', 'new-hash');
        expect(await services.users.findById(user.id)).toMatchObject({
          passwordHash: 'new-hash',
          credentialVersion: user.credentialVersion,
        });
        const sid = await services.sessions.create(verified, start + 1);
        expect(sid).toEqual(expect.any(String));
        expect(await services.sessions.findActive(sid ?? '')).not.toBeNull();
        expect(await services.sessions.findActive(other)).not.toBeNull();
      });

      it('a session insert waits for a credential change still in its transaction, then issues nothing', async () => {
        const user = await createUser('ada@example.com');
        const verified = { userId: user.id, credentialVersion: user.credentialVersion };
        let settled = false;
        let pending: Promise<string | null> | undefined;
        await db.transaction().execute(async (trx) => {
          await trx
            .updateTable('users')
            .set((eb) => ({ credential_version: eb('credential_version', '+', 1) }))
            .where('id', '=', user.id)
            .execute();
          pending = services.sessions.create(verified, start);
          void pending.finally(() => (settled = true)).catch(() => undefined);
          // On PostgreSQL the insert reads the user row FOR SHARE: it must wait for the lock
          // rather than read the row as it was before this uncommitted change.
          await new Promise((resolve) => setTimeout(resolve, 150));
          expect(settled).toBe(false);
        });
        expect(await pending).toBeNull();
        expect(await sessionRows(user.id)).toEqual([]);
      });

      it('a database migrated before credential versions keeps its users and sessions, at version 0', async () => {
        const user = await createUser('ada@example.com');
        const sid = await newSession(user.id, start);
        // Such a database had none of the later migrations either: undone newest first.
        await signInPlacesMigration.down(db as unknown as Kysely<unknown>);
        await tokensMigration.down(db as unknown as Kysely<unknown>);
        await importsMigration.down(db as unknown as Kysely<unknown>);
        await identitiesMigration.down(db as unknown as Kysely<unknown>);
        await factorThrottleMigration.down(db as unknown as Kysely<unknown>);
        await webhookOutboxMigration.down(db as unknown as Kysely<unknown>);
        await auditLogMigration.down(db as unknown as Kysely<unknown>);
        await passkeysMigration.down(db as unknown as Kysely<unknown>);
        await totpMigration.down(db as unknown as Kysely<unknown>);
        await sessionProofsMigration.down(db as unknown as Kysely<unknown>);
        await mailPriorityMigration.down(db as unknown as Kysely<unknown>);
        await pruneIndexesMigration.down(db as unknown as Kysely<unknown>);
        await signupSecretsMigration.down(db as unknown as Kysely<unknown>);
        await invitationsMigration.down(db as unknown as Kysely<unknown>);
        await accountsMigration.down(db as unknown as Kysely<unknown>);
        await mailOutboxMigration.down(db as unknown as Kysely<unknown>);
        await credentialVersionMigration.down(db as unknown as Kysely<unknown>);
        await sql`delete from kysely_migration where name > '001-initial'`.execute(db);
        await migrateToLatest(db);
        expect(await services.users.findById(user.id)).toMatchObject({ credentialVersion: 0 });
        expect(await services.sessions.findActive(sid)).not.toBeNull();
        expect(await newSession(user.id, start + 1)).toEqual(expect.any(String));
      });

      it('pruning deletes revoked sessions and those created too long ago, and nothing else', async () => {
        const user = await createUser('ada@example.com');
        const revoked = await newSession(user.id, start + 100);
        await services.sessions.revoke(revoked, start + 101);
        const old = await newSession(user.id, start);
        const boundary = await newSession(user.id, start + 50);
        const live = await newSession(user.id, start + 100);
        await services.sessions.prune(start + 50);
        const left = (await sessionRows(user.id)).map((row) => row.id).sort();
        expect(left).toEqual([boundary, live].sort());
        expect(left).not.toContain(old);
        expect(await services.sessions.findActive(live)).not.toBeNull();
      });
      it('a prune of several batches deletes every row it should, and other work runs between batches', async () => {
        const user = await createUser('ada@example.com');
        const batches = 2.5;
        const rows = Math.round(pruneBatchRows * batches);
        const session = (id: string, createdAt: number, revokedAt: number | null) => ({
          id,
          user_id: user.id,
          created_at: createdAt,
          revoked_at: revokedAt,
        });
        const insertAll = async <T>(values: T[], insert: (chunk: T[]) => Promise<unknown>) => {
          for (let i = 0; i < values.length; i += 500) await insert(values.slice(i, i + 500));
        };
        const sessions = [
          ...Array.from({ length: rows }, (_, i) => session(`old-${i}`, start, null)),
          ...Array.from({ length: rows }, (_, i) => session(`revoked-${i}`, start + 100, start)),
          ...Array.from({ length: 3 }, (_, i) => session(`live-${i}`, start + 100, null)),
        ];
        await insertAll(sessions, (chunk) => db.insertInto('sessions').values(chunk).execute());
        const events = Array.from({ length: rows + 2 }, (_, i) => ({
          id: `event-${i}`,
          user_id: user.id,
          type: 'signed_in',
          at: i < rows ? start : start + 100,
          ip: '192.0.2.1',
          device: 'test',
          detail: null,
        }));
        await insertAll(events, (chunk) => db.insertInto('account_events').values(chunk).execute());
        const token = (i: number, expiresAt: number, usedAt: number | null) => ({
          id: `token-${i}`,
          user_id: user.id,
          purpose: 'reset' as const,
          code_tries_left: 0,
          token_hash: `hash-${i}`,
          email: user.email,
          expires_at: expiresAt,
          used_at: usedAt,
          created_at: start,
        });
        const tokens = Array.from({ length: 2 * rows + 2 }, (_, i) =>
          i < rows
            ? token(i, start, null)
            : i < 2 * rows
              ? token(i, start + 1000, start)
              : token(i, start + 1000, null),
        );
        await insertAll(tokens, (chunk) => db.insertInto('account_tokens').values(chunk).execute());

        // A timer stands for the requests waiting while the prune runs.
        let ticks = 0;
        const timer = setInterval(() => (ticks += 1), 0);
        try {
          await Promise.all([
            services.sessions.prune(start + 50),
            pruneEvents(db, start + 50),
            pruneTokens(db, start + 50),
          ]);
          // The passes turn SQLite's automatic checkpoint off while they run (a worker thread
          // takes the checkpoints); once the last ends it is back, or the log would grow forever.
          if (backend.dialect === 'sqlite') {
            const { rows: setting } = await sql<{
              wal_autocheckpoint: number;
            }>`pragma wal_autocheckpoint`.execute(db);
            expect(setting).toEqual([{ wal_autocheckpoint: 1000 }]);
          }
        } finally {
          clearInterval(timer);
          await db.deleteFrom('account_events').execute();
        }
        const left = (await sessionRows(user.id)).map((row) => row.id).sort();
        expect(left).toEqual(['live-0', 'live-1', 'live-2']);
        const tokensLeft = await db.selectFrom('account_tokens').select('id').execute();
        await db.deleteFrom('account_tokens').execute();
        expect(tokensLeft.map((row) => row.id).sort()).toEqual([
          `token-${2 * rows}`,
          `token-${2 * rows + 1}`,
        ]);
        // On SQLite a statement runs on the event loop: only the yields between batches let the
        // timer fire (on PostgreSQL every statement awaits the network anyway).
        if (backend.dialect === 'sqlite') expect(ticks).toBeGreaterThanOrEqual(4);
      });
    });

    describe('throttle store', () => {
      const limit: ThrottleLimit = { maxFailures: 3, windowMs: 60_000, lockMs: 300_000 };
      let store: ReturnType<typeof createKyselyThrottleStore>;
      beforeAll(() => {
        store = createKyselyThrottleStore(db);
      });
      const row = (key: string) =>
        db.selectFrom('signin_throttle').selectAll().where('key', '=', key).executeTakeFirst();

      it('counts charges 1, 2, 3 and locks for lockMs when the count reaches maxFailures', async () => {
        expect(await store.charge('k', limit, start)).toEqual({ failures: 1, lockedUntil: 0 });
        expect(await store.charge('k', limit, start + 1)).toEqual({ failures: 2, lockedUntil: 0 });
        expect(await store.charge('k', limit, start + 2)).toEqual({
          failures: 3,
          lockedUntil: start + 2 + limit.lockMs,
        });
        expect(await store.charge('other', limit, start + 3)).toEqual({
          failures: 1,
          lockedUntil: 0,
        });
      });

      it('a limit of one failure locks on the first charge', async () => {
        const one = { ...limit, maxFailures: 1 };
        expect(await store.charge('k', one, start)).toEqual({
          failures: 1,
          lockedUntil: start + limit.lockMs,
        });
      });

      it('during a lock every charge still counts and the lock’s end does not move', async () => {
        for (let i = 0; i < 3; i += 1) await store.charge('k', limit, start);
        const lockEnd = start + limit.lockMs;
        expect(await store.charge('k', limit, start + 1000)).toEqual({
          failures: 4,
          lockedUntil: lockEnd,
        });
        // Even past the window: the lock, not the window, decides until it ends.
        expect(await store.charge('k', limit, lockEnd - 1)).toEqual({
          failures: 5,
          lockedUntil: lockEnd,
        });
      });

      it('after a lock ends the count starts again at 1', async () => {
        for (let i = 0; i < 3; i += 1) await store.charge('k', limit, start);
        expect(await store.charge('k', limit, start + limit.lockMs)).toEqual({
          failures: 1,
          lockedUntil: 0,
        });
        expect(await row('k')).toMatchObject({ window_started_at: start + limit.lockMs });
      });

      it('after the window ends without a lock the count starts again at 1', async () => {
        await store.charge('k', limit, start);
        expect(await store.charge('k', limit, start + limit.windowMs - 1)).toEqual({
          failures: 2,
          lockedUntil: 0,
        });
        expect(await store.charge('k', limit, start + limit.windowMs)).toEqual({
          failures: 1,
          lockedUntil: 0,
        });
      });

      it('a refund takes one charge back and lifts the lock that charge set', async () => {
        for (let i = 0; i < 3; i += 1) await store.charge('k', limit, start);
        await store.refund('k', limit);
        expect(await row('k')).toMatchObject({ failures: 2, locked_until: 0 });
        expect(await store.charge('k', limit, start + 1)).toEqual({
          failures: 3,
          lockedUntil: start + 1 + limit.lockMs,
        });
        // Past the limit, one refund leaves the lock in place.
        await store.charge('k', limit, start + 2);
        await store.refund('k', limit);
        expect(await row('k')).toMatchObject({
          failures: 3,
          locked_until: start + 1 + limit.lockMs,
        });
      });

      it('a refund never takes the count below zero, and a refund of an unknown key does nothing', async () => {
        await store.charge('k', limit, start);
        await store.refund('k', limit);
        await store.refund('k', limit);
        expect(await row('k')).toMatchObject({ failures: 0 });
        await store.refund('unknown', limit);
        expect(await row('unknown')).toBeUndefined();
      });

      it('clear deletes the counter, so the next charge is the first again', async () => {
        for (let i = 0; i < 3; i += 1) await store.charge('k', limit, start);
        await store.clear('k');
        expect(await row('k')).toBeUndefined();
        expect(await store.charge('k', limit, start + 1)).toEqual({ failures: 1, lockedUntil: 0 });
      });

      it('lockedUntil finds the latest lock in force among the keys and the prefix', async () => {
        expect(await store.lockedUntil(['a'], 'p:', start)).toBeNull();
        for (let i = 0; i < 3; i += 1) await store.charge('a', limit, start);
        await store.charge('p:1', limit, start);
        expect(await store.lockedUntil(['a', 'b'], 'p:', start + 1)).toBe(start + limit.lockMs);
        for (let i = 0; i < 3; i += 1) await store.charge('p:2', limit, start + 10);
        expect(await store.lockedUntil(['b'], 'p:', start + 11)).toBe(start + 10 + limit.lockMs);
        expect(await store.lockedUntil(['a'], 'q:', start + limit.lockMs)).toBeNull();
      });

      it('prune deletes only counters whose window and lock are both over', async () => {
        await store.charge('finished', limit, start);
        await store.charge('current', limit, start + limit.windowMs);
        for (let i = 0; i < 3; i += 1) await store.charge('locked', limit, start);
        await store.prune(start + limit.windowMs, limit.windowMs);
        expect(await row('finished')).toBeUndefined();
        expect(await row('current')).toBeDefined();
        expect(await row('locked')).toBeDefined();
        await store.prune(start + limit.lockMs, limit.windowMs);
        expect(await row('locked')).toBeUndefined();
      });

      it('100 concurrent charges of one key lose no increment', async () => {
        const charges = await Promise.all(
          Array.from({ length: 100 }, () => store.charge('hot', limit, start)),
        );
        const counts = charges.map((charge) => charge.failures).sort((a, b) => a - b);
        expect(counts).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
        expect(await row('hot')).toMatchObject({
          failures: 100,
          locked_until: start + limit.lockMs,
        });
      });

      describe("on the database's clock", () => {
        let dbStore: ReturnType<typeof createKyselyThrottleStore>;
        beforeAll(() => {
          dbStore = createKyselyThrottleStore(db, backend.dialect);
        });

        it("times windows and locks by the database's clock, whatever the instance's says", async () => {
          const before = Date.now();
          // An instance whose clock is a day behind: its `now` only translates the lock's end.
          const skewed = before - 86_400_000;
          for (let i = 0; i < 2; i += 1) await dbStore.charge('db-clock', limit, skewed);
          const locked = await dbStore.charge('db-clock', limit, skewed);
          const after = Date.now();
          expect(locked.failures).toBe(3);
          // Retry-After as the instance computes it (lockedUntil - now) is the lock's length.
          expect(locked.lockedUntil - skewed).toBeGreaterThan(limit.lockMs - 2000);
          expect(locked.lockedUntil - skewed).toBeLessThanOrEqual(limit.lockMs + 2000);
          const stored = await row('db-clock');
          expect(Number(stored?.window_started_at)).toBeGreaterThanOrEqual(before - 2000);
          expect(Number(stored?.window_started_at)).toBeLessThanOrEqual(after + 2000);
          expect(Number(stored?.locked_until)).toBeGreaterThanOrEqual(before + limit.lockMs - 2000);
        });

        it('a window the database says is over restarts, though the instance says it is not', async () => {
          const dayAgo = Date.now() - 86_400_000;
          await db
            .insertInto('signin_throttle')
            .values({ key: 'db-old', failures: 2, window_started_at: dayAgo, locked_until: 0 })
            .execute();
          // The caller's clock is two days behind: by it, the window started in its future.
          expect(await dbStore.charge('db-old', limit, dayAgo - 86_400_000)).toEqual({
            failures: 1,
            lockedUntil: 0,
          });
        });

        it("prune removes what the database's clock says is over", async () => {
          const dayAgo = Date.now() - 86_400_000;
          await db
            .insertInto('signin_throttle')
            .values({ key: 'db-prune', failures: 2, window_started_at: dayAgo, locked_until: 0 })
            .execute();
          await dbStore.charge('db-fresh', limit, 0);
          await dbStore.prune(0, limit.windowMs);
          expect(await row('db-prune')).toBeUndefined();
          expect(await row('db-fresh')).toBeDefined();
        });
      });
    });

    describe('throttle (10 per email, 100 per address)', () => {
      async function attempts(count: number, email: string, ip: string) {
        for (let i = 0; i < count; i += 1) await services.throttle.admit(email, ip, start);
      }

      it('admits 10 attempts for an email, then refuses with Retry-After of the lock', async () => {
        for (let i = 0; i < 10; i += 1) {
          expect(
            await services.throttle.admit('ada@example.com', '192.0.2.1', start),
          ).toMatchObject({ admitted: true });
        }
        expect(await services.throttle.admit('ada@example.com', '192.0.2.1', start)).toEqual({
          admitted: false,
          retryAfterSeconds: 900,
        });
        // The same email from another address is refused too, with the time left.
        expect(
          await services.throttle.admit('ada@example.com', '192.0.2.9', start + 100_000),
        ).toEqual({ admitted: false, retryAfterSeconds: 800 });
      });

      it('other emails from the same address are admitted until the address limit', async () => {
        await attempts(11, 'ada@example.com', '192.0.2.1');
        // The address has 11 charges; 89 more emails get through, the 90th does not.
        for (let i = 0; i < 89; i += 1) {
          const admission = await services.throttle.admit(
            `user${i}@example.com`,
            '192.0.2.1',
            start,
          );
          expect(admission.admitted).toBe(true);
        }
        expect(await services.throttle.admit('last@example.com', '192.0.2.1', start)).toEqual({
          admitted: false,
          retryAfterSeconds: 900,
        });
        expect(
          (await services.throttle.admit('last@example.com', '192.0.2.2', start)).admitted,
        ).toBe(true);
      });

      it('a success resets the email’s count', async () => {
        await attempts(9, 'ada@example.com', '192.0.2.1');
        const admission = await services.throttle.admit('ada@example.com', '192.0.2.1', start);
        if (!admission.admitted) throw new Error('the 10th attempt should be admitted');
        await services.throttle.succeeded(admission.keys);
        for (let i = 0; i < 10; i += 1) {
          expect(
            (await services.throttle.admit('ada@example.com', '192.0.2.1', start)).admitted,
          ).toBe(true);
        }
        expect(
          (await services.throttle.admit('ada@example.com', '192.0.2.1', start)).admitted,
        ).toBe(false);
      });

      it('pruning after the lock forgets every counter', async () => {
        await attempts(11, 'ada@example.com', '192.0.2.1');
        await services.throttle.prune(start + 900_000);
        expect(await db.selectFrom('signin_throttle').selectAll().execute()).toEqual([]);
        expect(
          (await services.throttle.admit('ada@example.com', '192.0.2.1', start + 900_000)).admitted,
        ).toBe(true);
      });
    });
  });
}
