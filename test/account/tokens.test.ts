import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  codeAlphabet,
  codeTriesMax,
  consume,
  issue,
  keyCodeDigests,
  readCode,
  type IssueRequest,
} from '../../src/account/model/secrets.js';
import { ipPrefix } from '../../src/util/ip-prefix.js';
import type { Database } from '../../src/db/schema.js';
import { createKyselyUserStore } from '../../src/users/kysely-store.js';
import type { UserStore } from '../../src/users/store.js';
import { databaseBackends, openMigrated } from '../helpers/backends.js';

const backends = databaseBackends('tokens');

describe.each(backends)('e-mailed secrets on $name', ({ skip, create }) => {
  let db: Kysely<Database>;
  let users: UserStore;
  let close: () => Promise<void>;
  let count = 0;

  beforeAll(async () => {
    if (skip) return;
    keyCodeDigests(['tokens-test-secret-0123456789abcdefghijklmnop']);
    ({ db, close } = await openMigrated({ create }));
    users = createKyselyUserStore(db);
  });
  afterAll(async () => {
    if (!skip) await close();
  });

  const newUser = async () => {
    count += 1;
    const user = await users.create({
      email: `user${count}@example.com`,
      name: 'User',
      passwordHash: 'not-a-hash',
    });
    if (user === null) throw new Error('no user');
    return user;
  };
  const resetFor = (user: { id: string; email: string; credentialVersion: number }) =>
    ({
      purpose: 'reset',
      userId: user.id,
      email: user.email,
      credentialVersion: user.credentialVersion,
      ttlSeconds: 3600,
    }) satisfies IssueRequest;

  it.skipIf(skip)('stores only digests, and a link token works once', async () => {
    const user = await newUser();
    const issued = await issue(db, resetFor(user));
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{43}$/u);
    expect(issued.code).toMatch(new RegExp(`^[${codeAlphabet}]{8}$`, 'u'));
    const row = await db
      .selectFrom('account_tokens')
      .selectAll()
      .where('id', '=', issued.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(issued.token);
    expect(JSON.stringify(row)).not.toContain(issued.code);
    const used = await consume(db, { purpose: 'reset', token: issued.token });
    expect(used).toMatchObject({ id: issued.id, userId: user.id, email: user.email });
    expect(await consume(db, { purpose: 'reset', token: issued.token })).toBeNull();
  });

  it.skipIf(skip)('refuses the wrong purpose, an unknown token and an expired one', async () => {
    const user = await newUser();
    const at = Date.now();
    const issued = await issue(db, { ...resetFor(user), ttlSeconds: 60 }, at);
    expect(await consume(db, { purpose: 'verify', token: issued.token })).toBeNull();
    expect(await consume(db, { purpose: 'reset', token: `${issued.token}x` })).toBeNull();
    expect(await consume(db, { purpose: 'reset', token: '' })).toBeNull();
    expect(await consume(db, { purpose: 'reset', token: issued.token }, at + 60_000)).toBeNull();
    expect(
      await consume(db, { purpose: 'reset', token: issued.token }, at + 59_000),
    ).not.toBeNull();
  });

  it.skipIf(skip)('a password change or an address change since the issue voids it', async () => {
    const user = await newUser();
    const before = await issue(db, resetFor(user));
    await users.setPasswordHash(user.id, 'another-hash');
    expect(await consume(db, { purpose: 'reset', token: before.token })).toBeNull();
    const changed = await users.findById(user.id);
    const current = await issue(db, resetFor(changed as NonNullable<typeof changed>));
    await users.setEmail(user.id, `moved-${user.email}`);
    expect(await consume(db, { purpose: 'reset', token: current.token })).toBeNull();
  });

  it.skipIf(skip)(
    'a lock secret survives a password change and a disable; an address change voids it unless it is the notice of that move; a removal voids both',
    async () => {
      const user = await newUser();
      const lockFor = (movedTo?: string) =>
        issue(db, {
          ...resetFor(user),
          purpose: 'lock',
          ttlSeconds: 7 * 86400,
          withCode: false,
          ...(movedTo !== undefined && { newEmail: movedTo }),
        });
      const first = await lockFor();
      const second = await lockFor();
      const left = await lockFor();
      const moved = `moved-${user.email}`;
      const moveNotice = await lockFor(moved);
      const kept = await lockFor(moved);
      await users.setPasswordHash(user.id, 'another-hash');
      await users.setDisabled(user.id, true);
      expect(await consume(db, { purpose: 'lock', token: first.token })).toMatchObject({
        userId: user.id,
        purpose: 'lock',
      });
      expect(await consume(db, { purpose: 'lock', token: first.token })).toBeNull();
      expect(await consume(db, { purpose: 'reset', token: second.token })).toBeNull();
      // The mailbox it went to is no longer the account's: that link no longer speaks for it.
      await users.setEmail(user.id, moved);
      expect(await consume(db, { purpose: 'lock', token: left.token })).toBeNull();
      // The move's own notice went to the old address on purpose, and holds after a further move.
      await users.setEmail(user.id, `again-${user.email}`);
      expect(await consume(db, { purpose: 'lock', token: moveNotice.token })).toMatchObject({
        userId: user.id,
      });
      await users.remove(user.id);
      expect(await consume(db, { purpose: 'lock', token: second.token })).toBeNull();
      expect(await consume(db, { purpose: 'lock', token: kept.token })).toBeNull();
    },
  );

  it.skipIf(skip)('a code works typed loosely, and counts five tries', async () => {
    const user = await newUser();
    const issued = await issue(db, resetFor(user));
    const code = issued.code as string;
    const wrong = code.startsWith('A') ? `B${code.slice(1)}` : `A${code.slice(1)}`;
    for (let i = 0; i < codeTriesMax - 1; i += 1) {
      expect(await consume(db, { purpose: 'reset', email: user.email, code: wrong })).toBeNull();
    }
    const typed = `${code.slice(0, 4).toLowerCase()}-${code.slice(4)}`;
    const used = await consume(db, { purpose: 'reset', email: user.email, code: typed });
    expect(used?.id).toBe(issued.id);
    // Used: the link is spent too.
    expect(await consume(db, { purpose: 'reset', token: issued.token })).toBeNull();

    const second = await issue(db, resetFor(user));
    for (let i = 0; i < codeTriesMax; i += 1) {
      await consume(db, { purpose: 'reset', email: user.email, code: wrong });
    }
    const late = { purpose: 'reset', email: user.email, code: second.code as string } as const;
    expect(await consume(db, late)).toBeNull();
  });

  it.skipIf(skip)('parallel guesses cannot get past the five tries', async () => {
    const user = await newUser();
    const issued = await issue(db, resetFor(user));
    const code = issued.code as string;
    const wrong = code.startsWith('A') ? `B${code.slice(1)}` : `A${code.slice(1)}`;
    const guesses = [...Array<string>(12).fill(wrong), code];
    const results = await Promise.all(
      guesses.map((guess) =>
        db
          .transaction()
          .execute((trx) => consume(trx, { purpose: 'reset', email: user.email, code: guess })),
      ),
    );
    const row = await db
      .selectFrom('account_tokens')
      .select(['code_tries_left', 'used_at'])
      .where('id', '=', issued.id)
      .executeTakeFirstOrThrow();
    const winners = results.filter((r) => r !== null).length;
    if (row.used_at === null) {
      // The twelve wrong guesses spent all five tries before the right one came: nobody won.
      expect(Number(row.code_tries_left)).toBe(0);
      expect(winners).toBe(0);
    } else {
      // The right code won by spending one of the five tries; the guesses after it found the
      // secret used and spent none (which order the database ran them in is its choice).
      expect(Number(row.code_tries_left)).toBeGreaterThanOrEqual(0);
      expect(Number(row.code_tries_left)).toBeLessThan(5);
      expect(winners).toBe(1);
    }
  });

  it.skipIf(skip)('of parallel consumes of one token exactly one wins', async () => {
    const user = await newUser();
    const issued = await issue(db, resetFor(user));
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        db.transaction().execute((trx) => consume(trx, { purpose: 'reset', token: issued.token })),
      ),
    );
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });

  it.skipIf(skip)('an invitation holds while no account has its address', async () => {
    count += 1;
    const email = `invited${count}@example.com`;
    const invite = {
      purpose: 'invite',
      userId: null,
      email,
      credentialVersion: null,
      ttlSeconds: 7 * 86400,
      withCode: false,
    } satisfies IssueRequest;
    const first = await issue(db, invite);
    expect(first.code).toBeNull();
    const second = await issue(db, invite);
    expect(await consume(db, { purpose: 'invite', token: first.token })).toMatchObject({
      userId: null,
      email,
    });
    await users.create({ email, name: 'Invited', passwordHash: 'x' });
    expect(await consume(db, { purpose: 'invite', token: second.token })).toBeNull();
  });
});

describe('the small parts', () => {
  it.each([
    ['abcd-efgh', 'ABCDEFGH'],
    [' 2345 6789 ', '23456789'],
    ['ABCDEFG0', null],
    ['ABCDEFGI', null],
    ['ABCDEFG', null],
    ['ABCDEFGHJ', null],
  ])('a code typed %j reads as %j', (typed, code) => {
    expect(readCode(typed)).toBe(code);
  });

  it.each([
    ['203.0.113.77', '203.0.113.0/24'],
    ['::ffff:203.0.113.77', '203.0.113.0/24'],
    ['2001:db8:abcd:12:1:2:3:4', '2001:db8:abcd::/48'],
    ['', ''],
  ])('the address %j is shown as %j', (address, shown) => {
    expect(ipPrefix(address)).toBe(shown);
  });
});
