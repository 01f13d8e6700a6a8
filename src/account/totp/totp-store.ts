import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { emitUserWebhook } from '../../webhooks/emit.js';

/*
 * The rows behind TOTP and recovery codes. Every "use it once" here is one conditional UPDATE
 * whose affected-row count is the answer: two instances racing on one code both run it, and the
 * database lets exactly one of them move the row. The writes that turn TOTP on or off announce
 * it (src/webhooks/emit.ts) in the same transaction, so no flow can change it unannounced.
 */

export interface TotpRow {
  /** Sealed (src/account/totp/secret-box.ts); null: TOTP is not on. */
  secret: string | null;
  pending: string | null;
  lastStep: number;
}

export async function readTotp(db: Kysely<Database>, userId: string): Promise<TotpRow | null> {
  const row = await db
    .selectFrom('user_totp')
    .select(['secret', 'pending_secret', 'last_step'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row === undefined
    ? null
    : { secret: row.secret, pending: row.pending_secret, lastStep: Number(row.last_step) };
}

/** Keeps a new set-up waiting for its code; an active TOTP stays in use until then. */
export async function savePending(
  db: Kysely<Database>,
  userId: string,
  sealed: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('user_totp')
    .values({ user_id: userId, pending_secret: sealed, updated_at: now })
    .onConflict((conflict) =>
      conflict.column('user_id').doUpdateSet({ pending_secret: sealed, updated_at: now }),
    )
    .execute();
}

/** A pending secret checked by a code of it, and what it becomes. */
export interface CheckedPending {
  /** The pending box as it was read: it still has to be the one pending. */
  pending: string;
  /** The active box the set-up proved and this one replaces; null for a first set-up. */
  replacing: string | null;
  /** The secret sealed as an active one (the pending box re-sealed without `replacing`). */
  sealed: string;
  /** The time step of the confirming code: the first one accepted. */
  step: number;
}

/**
 * The pending secret becomes the active one, with the confirming code's step as its first
 * accepted step, if it is still pending and the active secret is still the one it replaces (or
 * there is still none), in the caller's transaction with its `second_factor.added` webhook. No
 * step of a new random secret was ever accepted, so the step is not compared with `last_step`:
 * a replacement's proof has just spent a step of the old secret, often the very step the new
 * app shows. True when it moved.
 */
export async function activatePending(
  trx: Kysely<Database>,
  userId: string,
  checked: CheckedPending,
  now: number,
): Promise<boolean> {
  const { replacing } = checked;
  const result = await trx
    .updateTable('user_totp')
    .set({
      secret: checked.sealed,
      pending_secret: null,
      last_step: checked.step,
      enabled_at: now,
      updated_at: now,
    })
    .where('user_id', '=', userId)
    .where('pending_secret', '=', checked.pending)
    .where((eb) => (replacing === null ? eb('secret', 'is', null) : eb('secret', '=', replacing)))
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await emitUserWebhook(trx, 'second_factor.added', userId, now, {
    factor: 'totp',
    ...(replacing !== null && { replaced: true }),
  });
  return true;
}

/** Claims `step` for the active secret `secret`: true for exactly one caller, once. */
export async function claimStep(
  db: Kysely<Database>,
  userId: string,
  secret: string,
  step: number,
): Promise<boolean> {
  const result = await db
    .updateTable('user_totp')
    .set({ last_step: step })
    .where('user_id', '=', userId)
    .where('secret', '=', secret)
    .where('last_step', '<', step)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * TOTP off and the recovery codes void, in the caller's transaction with its
 * `second_factor.removed` webhook. The last accepted step is kept: a code seen before stays
 * spent if the same secret were ever enrolled again. True when TOTP was on.
 */
export async function removeTotp(
  db: Kysely<Database>,
  userId: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('user_totp')
    .set({
      secret: null,
      pending_secret: null,
      enabled_at: null,
      codes_made_at_signin: null,
      updated_at: now,
    })
    .where('user_id', '=', userId)
    .where('secret', 'is not', null)
    .executeTakeFirst();
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  const removed = Number(result.numUpdatedRows) === 1;
  if (removed) await emitUserWebhook(db, 'second_factor.removed', userId, now, { factor: 'totp' });
  return removed;
}

/**
 * The set of recovery codes replaced by `hashes`: the old set is void. `atSignIn`: made at an
 * enrolment during sign-in, whose one showing may not have reached the person, so `/account`
 * asks for new ones until they are made there.
 */
export async function replaceRecoveryCodes(
  db: Kysely<Database>,
  userId: string,
  hashes: readonly string[],
  now: number,
  atSignIn = false,
): Promise<void> {
  await db
    .updateTable('user_totp')
    .set({ codes_made_at_signin: atSignIn ? now : null })
    .where('user_id', '=', userId)
    .execute();
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  await db
    .insertInto('recovery_codes')
    .values(hashes.map((hash) => ({ user_id: userId, code_hash: hash, created_at: now })))
    .execute();
}

/** Marks the code used: true for exactly one caller, once. */
export async function useRecoveryCode(
  db: Kysely<Database>,
  userId: string,
  hash: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Whether TOTP is on, and how many recovery codes are unused (no secret leaves the store). */
export async function factorSummary(
  db: Kysely<Database>,
  userId: string,
): Promise<{ totp: boolean; recoveryCodes: number; codesMadeAtSignIn: boolean }> {
  const [totp, codes] = await Promise.all([
    db
      .selectFrom('user_totp')
      .select('codes_made_at_signin')
      .where('user_id', '=', userId)
      .where('secret', 'is not', null)
      .executeTakeFirst(),
    db
      .selectFrom('recovery_codes')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow(),
  ]);
  return {
    totp: totp !== undefined,
    recoveryCodes: Number(codes.count),
    codesMadeAtSignIn: totp !== undefined && totp.codes_made_at_signin !== null,
  };
}

/**
 * TOTP on with `sealed` as its secret and `step` as its first accepted step, for an account that
 * has none on (an enrolment at sign-in: nothing was pending), in the caller's transaction with
 * its `second_factor.added` webhook. True for exactly one caller: two enrolments racing, or one
 * racing a set-up in `/account`, move the row once.
 */
export async function enableTotp(
  db: Kysely<Database>,
  userId: string,
  sealed: string,
  step: number,
  now: number,
): Promise<boolean> {
  await db
    .insertInto('user_totp')
    .values({ user_id: userId, updated_at: now })
    .onConflict((conflict) => conflict.column('user_id').doNothing())
    .execute();
  const result = await db
    .updateTable('user_totp')
    .set({
      secret: sealed,
      pending_secret: null,
      last_step: step,
      enabled_at: now,
      updated_at: now,
    })
    .where('user_id', '=', userId)
    .where('secret', 'is', null)
    .where('last_step', '<', step)
    .executeTakeFirst();
  const enabled = Number(result.numUpdatedRows) === 1;
  if (enabled) await emitUserWebhook(db, 'second_factor.added', userId, now, { factor: 'totp' });
  return enabled;
}
