import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueChallenge } from '../../src/challenge/challenge-store.js';
import { createPasskeyStore } from '../../src/account/passkeys/passkey-store.js';
import { registeredUpkeep } from '../../src/account/upkeep-registry.js';
import { pruneAccountRecords } from '../../src/account/wing.js';
import type { Database } from '../../src/db/schema.js';
import { addUser, resetSecondFactor, type Actor } from '../../src/operator/operations.js';
import { databaseBackends, openMigrated } from '../helpers/backends.js';
import { firstPass } from '../helpers/passes.js';

const actor: Actor = { label: 'gatehouse CLI' };

describe('what each way in contributes to upkeep', () => {
  it('each registered way in declares its reset and its prune; passkeys are reset only when named, identities and e-mail never', () => {
    expect(
      registeredUpkeep.map(({ id, reset, prune }) => ({
        id,
        onlyWhenNamed: reset?.onlyWhenNamed,
        prunes: prune !== undefined,
      })),
    ).toEqual([
      // An identity is no second factor: an operator removes one by name (users remove-identity).
      { id: 'identities', onlyWhenNamed: undefined, prunes: true },
      // Its secrets are the account's e-mailed secrets, pruned with them; only mails of its own.
      { id: 'email', onlyWhenNamed: undefined, prunes: false },
      { id: 'totp', onlyWhenNamed: false, prunes: false },
      { id: 'passkeys', onlyWhenNamed: true, prunes: true },
    ]);
  });
});

for (const backend of databaseBackends('method-upkeep')) {
  describe.skipIf(backend.skip || !firstPass)(`way-in upkeep on ${backend.name}`, () => {
    let db: Kysely<Database>;
    let close: (() => Promise<void>) | undefined;
    const now = 1_800_000_000_000;
    const ports = () => ({ db, now: () => now });

    beforeAll(async () => {
      ({ db, close } = await openMigrated(backend));
    });
    afterAll(async () => {
      await close?.();
    });

    const newUser = async () => {
      const user = await addUser(ports(), {
        email: `ada-${randomUUID()}@example.com`,
        name: 'Ada',
        passwordHash: 'x',
        verified: true,
        actor,
      });
      if (user === 'taken') throw new Error('taken');
      return user;
    };

    it("the account's prune runs the challenge module's and every way in's: what is past its time goes, what is live stays", async () => {
      const user = await newUser();
      await issueChallenge(db, user, 'second_step', now - 3_600_000);
      await issueChallenge(db, user, 'second_step', now);
      const passkeys = createPasskeyStore(db);
      expect(await passkeys.spendChallenge('old-hash', now - 1)).toBe(true);
      expect(await passkeys.spendChallenge('live-hash', now + 60_000)).toBe(true);
      await pruneAccountRecords(db, now);
      const challenges = await db
        .selectFrom('signin_challenges')
        .select('token_hash')
        .where('user_id', '=', user.id)
        .execute();
      expect(challenges).toHaveLength(1);
      const spent = await db
        .selectFrom('passkey_challenges_used')
        .select('challenge_hash')
        .where('challenge_hash', 'in', ['old-hash', 'live-hash'])
        .execute();
      expect(spent.map((row) => row.challenge_hash)).toEqual(['live-hash']);
    });

    it('a reset with nothing to remove changes nothing and records nothing, named ways in or not', async () => {
      const user = await newUser();
      for (const methods of [[], ['passkeys']])
        expect(await resetSecondFactor(ports(), { userId: user.id, actor, methods })).toEqual({
          user,
          changed: false,
        });
      const events = await db
        .selectFrom('account_events')
        .select('type')
        .where('user_id', '=', user.id)
        .execute();
      expect(events).toEqual([]);
    });
  });
}
