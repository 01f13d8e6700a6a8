import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database, UsersTable } from '../db/schema.js';
import { revokeUserSessions } from '../sessions/session-store.js';
import { emitUserWebhook, emitWebhook, userData, withWebhooks } from '../webhooks/emit.js';
import { endHeldCredentials } from './held-credentials.js';
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

/** What a credential change sets besides moving the credential version on. */
export interface CredentialWrite {
  passwordHash?: string;
  /**
   * A new address. `verified`: 'now' when the change was proven from it (a confirmation), else
   * it counts as unverified unless it is the same address (an operator's move).
   */
  email?: { address: string; verified: 'now' | 'unproven' };
  /** The address was proven (a mailed secret came back): verified from now if not before. */
  emailProven?: true;
  disabled?: boolean;
}

/**
 * The one credential change of the users table: the row updated only while it has the expected
 * state (a secret's credential version, the hash a password was checked against, enabled), the
 * credential version moved on (so every e-mailed secret issued before and every sign-in that
 * verified the old credential is void), and every session ended but the one kept. Null when the
 * row no longer has that state, or is gone. The account model (src/account/model/) records the
 * event and queues the notice around it; the operator's operations record their own.
 */
export async function writeCredentialChange(
  trx: Kysely<Database>,
  change: {
    id: string;
    at: number;
    set: CredentialWrite;
    expect?: { credentialVersion?: number; passwordHash?: string; enabled?: true };
    keepSessionId?: string | null;
  },
): Promise<{ user: User; endedSessions: number } | null> {
  const { id, at, set, expect = {} } = change;
  let update = trx
    .updateTable('users')
    .set((eb) => ({
      credential_version: eb('credential_version', '+', 1),
      updated_at: at,
      ...(set.passwordHash !== undefined && { password_hash: set.passwordHash }),
      ...(set.email !== undefined && {
        email: set.email.address,
        email_verified_at:
          set.email.verified === 'now'
            ? eb.val(at)
            : // Verified means this mailbox answered: a new address has not, yet.
              eb
                .case()
                .when('email', '=', set.email.address)
                .then(eb.ref('email_verified_at'))
                .else(null)
                .end(),
      }),
      ...(set.email === undefined &&
        set.emailProven === true && {
          email_verified_at: eb.fn.coalesce('email_verified_at', eb.val(at)),
        }),
      ...(set.disabled !== undefined && { disabled: set.disabled ? 1 : 0 }),
    }))
    .where('id', '=', id);
  if (expect.credentialVersion !== undefined)
    update = update.where('credential_version', '=', expect.credentialVersion);
  if (expect.passwordHash !== undefined)
    update = update.where('password_hash', '=', expect.passwordHash);
  if (expect.enabled === true) update = update.where('disabled', '=', 0);
  const row = await update.returningAll().executeTakeFirst();
  if (row === undefined) return null;
  if (set.email !== undefined) await voidUnclaimedSecrets(trx, set.email.address, at);
  const ended = await revokeUserSessions(trx, id, at, change.keepSessionId ?? null);
  await endHeldCredentials(trx, id, at);
  // The application's copy of the user follows (src/webhooks/): nothing is written when off.
  const data = userData(row);
  if (set.passwordHash !== undefined) await emitWebhook(trx, 'password.changed', data, at);
  if (set.email !== undefined) await emitWebhook(trx, 'email.changed', data, at);
  // Verified by this change, not before: coalesce kept an earlier time.
  else if (set.emailProven === true && Number(row.email_verified_at) === at)
    await emitWebhook(trx, 'email.verified', data, at);
  if (set.disabled !== undefined)
    await emitWebhook(trx, set.disabled ? 'user.disabled' : 'user.enabled', data, at);
  return { user: toUser(row), endedSessions: Number(ended.numUpdatedRows) };
}

/** The user as this transaction sees it, or null. */
export async function readUser(trx: Kysely<Database>, id: string): Promise<User | null> {
  const row = await trx.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toUser(row) : null;
}

/** `null` when the email is taken (the unique constraint decides, so races create one). */
export function insertUser(
  db: Kysely<Database>,
  user: NewUser,
  at: number,
  /** The address counts as verified from `at` (an operator's `users add --verified`). */
  verified = false,
): Promise<User | null> {
  return withWebhooks(db, async (trx) => {
    const row = await trx
      .insertInto('users')
      .values({
        id: randomUUID(),
        email: user.email,
        name: user.name,
        password_hash: user.passwordHash,
        disabled: 0,
        ...(verified && { email_verified_at: at }),
        created_at: at,
        updated_at: at,
      })
      .onConflict((conflict) => conflict.column('email').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) return null;
    await voidUnclaimedSecrets(trx, user.email, at);
    await emitWebhook(trx, 'user.created', userData(row), at);
    return toUser(row);
  });
}

/**
 * An account takes an address: the secrets no account holds for it yet (invitations, pending
 * sign-ups) are used up in the same transaction. While an account holds the address they are
 * void anyway; spent, they stay void when the address is free again (the account removed or
 * moved), instead of coming back to life for whoever still has the old mail.
 */
export async function voidUnclaimedSecrets(trx: Kysely<Database>, email: string, at: number) {
  await trx
    .updateTable('account_tokens')
    .set({ used_at: at })
    .where('email', '=', email)
    .where('user_id', 'is', null)
    .where('used_at', 'is', null)
    .execute();
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
  return (await writeCredentialChange(trx, { id, at, set: { passwordHash } }))?.user ?? null;
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
  // A disabled user holds no live session, so enabling ends none.
  const changed = await writeCredentialChange(trx, { id, at, set: { disabled } });
  if (changed === null || disabled) return changed;
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
  return changed;
}

/** Deletes the user and their sessions; the user as it was, or null when none existed. */
export async function deleteUser(
  trx: Kysely<Database>,
  id: string,
  at = Date.now(),
): Promise<User | null> {
  await trx.deleteFrom('sessions').where('user_id', '=', id).execute();
  const row = await trx.deleteFrom('users').where('id', '=', id).returningAll().executeTakeFirst();
  if (row === undefined) return null;
  await emitWebhook(trx, 'user.deleted', userData(row), at);
  return toUser(row);
}

/** Changes the display name only; null when no such user exists. */
export function writeName(
  db: Kysely<Database>,
  id: string,
  name: string,
  at: number,
): Promise<User | null> {
  return withWebhooks(db, async (trx) => {
    const row = await trx
      .updateTable('users')
      .set({ name, updated_at: at })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) return null;
    await emitWebhook(trx, 'user.updated', userData(row), at);
    return toUser(row);
  });
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
  const changed = await writeCredentialChange(trx, {
    id,
    at,
    set: { email: { address: normalisedEmail, verified: 'unproven' } },
  });
  return changed === null ? 'missing' : changed.user;
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
  const changed = Number(result.numUpdatedRows) === 1;
  if (changed) await emitUserWebhook(trx, 'email.verified', id, at);
  return changed;
}

/** The ids of every user whose address is verified (one read, for a list of every user). */
export async function verifiedUserIds(db: Kysely<Database>): Promise<Set<string>> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('email_verified_at', 'is not', null)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/**
 * Each user's second factors, for `users list`: `totp` when an authenticator app is on,
 * `passkey` when they hold one. Two reads for every row.
 */
export async function secondFactorsByUser(db: Kysely<Database>): Promise<Map<string, string[]>> {
  const [totp, passkeys] = await Promise.all([
    db.selectFrom('user_totp').select('user_id').where('enabled_at', 'is not', null).execute(),
    db.selectFrom('passkeys').select('user_id').distinct().execute(),
  ]);
  const factors = new Map<string, string[]>();
  const add = (userId: string, factor: string) =>
    factors.set(userId, [...(factors.get(userId) ?? []), factor]);
  for (const row of totp) add(row.user_id, 'totp');
  for (const row of passkeys) add(row.user_id, 'passkey');
  return factors;
}
