import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database, UsersTable } from '../db/schema.js';
import { revokeUserSessions } from '../sessions/session-store.js';
import type { NewUser, User } from './store.js';

/*
 * Every change to the `users` table outside the account model, each in a transaction the caller
 * holds (`trx`), so that an operation can commit its change together with its event. Nothing
 * else writes the table: the user store (kysely-store.ts) wraps each in a transaction of its own,
 * and src/operator/ runs them beside the event that records them.
 */

export function toUser(row: Selectable<UsersTable>): User {
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

/** The user as this transaction sees it, or null. */
export async function readUser(trx: Kysely<Database>, id: string): Promise<User | null> {
  const row = await trx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toUser(row) : null;
}

/** `null` when the email is taken (the unique constraint decides, so races create one). */
export async function insertUser(
  trx: Kysely<Database>,
  user: NewUser,
  at: number,
): Promise<User | null> {
  const row = await trx
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
}

/**
 * A new password hash: the credential version moves on and every session ends. Null when no
 * such user exists.
 */
export async function writePasswordHash(
  trx: Kysely<Database>,
  id: string,
  passwordHash: string,
  at: number,
): Promise<User | null> {
  const row = await trx
    .updateTable('users')
    .set((eb) => ({
      password_hash: passwordHash,
      credential_version: eb('credential_version', '+', 1),
      updated_at: at,
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) return null;
  await revokeUserSessions(trx, id, at);
  return toUser(row);
}

/**
 * Disables or enables: the credential version moves on either way. Disabling ends every session
 * and says how many; enabling voids the "this wasn't me" links mailed before. Null when no such
 * user exists.
 */
export async function writeDisabled(
  trx: Kysely<Database>,
  id: string,
  disabled: boolean,
  at: number,
): Promise<{ user: User; endedSessions: number } | null> {
  const row = await trx
    .updateTable('users')
    .set((eb) => ({
      disabled: disabled ? 1 : 0,
      credential_version: eb('credential_version', '+', 1),
      updated_at: at,
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) return null;
  if (disabled) {
    const ended = await revokeUserSessions(trx, id, at);
    return { user: toUser(row), endedSessions: Number(ended.numUpdatedRows) };
  }
  // Enabled again, by an operator who has the account back in hand: a "this wasn't me" link
  // from before (it may have reached an intruder's mailbox) locks it no more.
  await trx
    .updateTable('account_tokens')
    .set({ expires_at: at })
    .where('user_id', '=', id)
    .where('purpose', '=', 'lock')
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .execute();
  return { user: toUser(row), endedSessions: 0 };
}

/** Deletes the user and their sessions; the user as it was, or null when none existed. */
export async function deleteUser(trx: Kysely<Database>, id: string): Promise<User | null> {
  await trx.deleteFrom('sessions').where('user_id', '=', id).execute();
  const row = await trx.deleteFrom('users').where('id', '=', id).returningAll().executeTakeFirst();
  return row ? toUser(row) : null;
}

/** Changes the display name only; null when no such user exists. */
export async function writeName(
  trx: Kysely<Database>,
  id: string,
  name: string,
  at: number,
): Promise<User | null> {
  const row = await trx
    .updateTable('users')
    .set({ name, updated_at: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ? toUser(row) : null;
}

/**
 * Moves the user to another normalised email, ends their sessions and moves the credential
 * version on; the new address counts as unverified (the same one stays as it was). 'taken' when
 * another user has it (nothing changes), 'missing' when no such user exists.
 */
export async function writeEmail(
  trx: Kysely<Database>,
  id: string,
  normalisedEmail: string,
  at: number,
): Promise<User | 'taken' | 'missing'> {
  const holder = await trx
    .selectFrom('users')
    .select('id')
    .where('email', '=', normalisedEmail)
    .executeTakeFirst();
  if (holder !== undefined && holder.id !== id) return 'taken';
  const row = await trx
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
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) return 'missing';
  await revokeUserSessions(trx, id, at);
  return toUser(row);
}

/**
 * Marks the user's address verified at `at`, unless it already is: true when it changed (false
 * too when no such user exists: ask `readUser` first to tell the two apart).
 */
export async function markVerified(
  trx: Kysely<Database>,
  id: string,
  at: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('users')
    .set({ email_verified_at: at, updated_at: at })
    .where('id', '=', id)
    .where('email_verified_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
