import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { NewUser, UserStore } from './store.js';
import {
  deleteUser,
  insertUser,
  readUser,
  toUser,
  writeDisabled,
  writeEmail,
  writeName,
  writePasswordHash,
} from './writes.js';

/**
 * The user store on Kysely, for SQLite and PostgreSQL alike. Changing a password, disabling
 * and removing a user end that user's sessions in the same transaction; changing a password,
 * disabling and enabling also move its credential version on, so that a sign-in that verified
 * the old credential issues no session after the change (src/sessions/session-insert.ts). Each
 * change is one of writes.ts's, in a transaction of its own.
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

    findById: (id) => readUser(db, id),

    async create(user: NewUser) {
      return insertUser(db, user, now());
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
      const changed = await db
        .transaction()
        .execute((trx) => writePasswordHash(trx, id, passwordHash, now()));
      return changed !== null;
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
      const changed = await db
        .transaction()
        .execute((trx) => writeDisabled(trx, id, disabled, now()));
      return changed !== null;
    },

    async remove(id) {
      return (await db.transaction().execute((trx) => deleteUser(trx, id))) !== null;
    },

    async rename(id, name) {
      return (await writeName(db, id, name, now())) !== null;
    },

    async setEmail(id, normalisedEmail) {
      const result = await db
        .transaction()
        .execute((trx) => writeEmail(trx, id, normalisedEmail, now()));
      return typeof result === 'string' ? result : 'changed';
    },
  };
}
