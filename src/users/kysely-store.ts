import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database, UsersTable } from '../db/schema.js';
import { revokeUserSessions } from '../sessions/session-store.js';
import type { NewUser, User, UserStore } from './store.js';

function toUser(row: Selectable<UsersTable>): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    passwordHash: row.password_hash,
    disabled: Number(row.disabled) === 1,
    credentialVersion: Number(row.credential_version),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * The user store on Kysely, for SQLite and PostgreSQL alike. Changing a password, disabling
 * and removing a user end that user's sessions in the same transaction; changing a password,
 * disabling and enabling also move its credential version on, so that a sign-in that verified
 * the old credential issues no session after the change (src/sessions/session-store.ts).
 */
export function createKyselyUserStore(
  db: Kysely<Database>,
  now: () => number = () => Date.now(),
): UserStore {
  return {
    async findByEmail(normalisedEmail) {
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', normalisedEmail)
        .executeTakeFirst();
      return row ? toUser(row) : null;
    },

    async findById(id) {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toUser(row) : null;
    },

    async create(user: NewUser) {
      const at = now();
      const row = await db
        .insertInto('users')
        .values({
          id: randomUUID(),
          email: user.email,
          name: user.name,
          password_hash: user.passwordHash,
          disabled: 0,
          created_at: at,
          updated_at: at,
        })
        .onConflict((conflict) => conflict.column('email').doNothing())
        .returningAll()
        .executeTakeFirst();
      return row ? toUser(row) : null;
    },

    async list() {
      const rows = await db.selectFrom('users').selectAll().orderBy('email').execute();
      return rows.map(toUser);
    },

    async count() {
      const row = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async setPasswordHash(id, passwordHash) {
      return db.transaction().execute(async (trx) => {
        const at = now();
        const result = await trx
          .updateTable('users')
          .set((eb) => ({
            password_hash: passwordHash,
            credential_version: eb('credential_version', '+', 1),
            updated_at: at,
          }))
          .where('id', '=', id)
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) return false;
        await revokeUserSessions(trx, id, at);
        return true;
      });
    },

    async upgradePasswordHash(id, oldHash, newHash) {
      await db
        .updateTable('users')
        .set({ password_hash: newHash })
        .where('id', '=', id)
        .where('password_hash', '=', oldHash)
        .execute();
    },

    async setDisabled(id, disabled) {
      return db.transaction().execute(async (trx) => {
        const at = now();
        const result = await trx
          .updateTable('users')
          .set((eb) => ({
            disabled: disabled ? 1 : 0,
            credential_version: eb('credential_version', '+', 1),
            updated_at: at,
          }))
          .where('id', '=', id)
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) return false;
        if (disabled) await revokeUserSessions(trx, id, at);
        // Enabled again, by an operator who has the account back in hand: a "this wasn't me"
        // link from before (it may have reached an intruder's mailbox) locks it no more.
        else
          await trx
            .updateTable('account_tokens')
            .set({ expires_at: at })
            .where('user_id', '=', id)
            .where('purpose', '=', 'lock')
            .where('used_at', 'is', null)
            .where('expires_at', '>', at)
            .execute();
        return true;
      });
    },

    async remove(id) {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('sessions').where('user_id', '=', id).execute();
        const result = await trx.deleteFrom('users').where('id', '=', id).executeTakeFirst();
        return result.numDeletedRows > 0n;
      });
    },

    async rename(id, name) {
      const result = await db
        .updateTable('users')
        .set({ name, updated_at: now() })
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async setEmail(id, normalisedEmail) {
      return db.transaction().execute(async (trx) => {
        const holder = await trx
          .selectFrom('users')
          .select('id')
          .where('email', '=', normalisedEmail)
          .executeTakeFirst();
        if (holder !== undefined && holder.id !== id) return 'taken';
        const at = now();
        const result = await trx
          .updateTable('users')
          .set((eb) => ({
            email: normalisedEmail,
            credential_version: eb('credential_version', '+', 1),
            // Verified means this mailbox answered: a new address has not, yet.
            email_verified_at: eb
              .case()
              .when('email', '=', normalisedEmail)
              .then(eb.ref('email_verified_at'))
              .else(null)
              .end(),
            updated_at: at,
          }))
          .where('id', '=', id)
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) return 'missing';
        await revokeUserSessions(trx, id, at);
        return 'changed';
      });
    },
  };
}
