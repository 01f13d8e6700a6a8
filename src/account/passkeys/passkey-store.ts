import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { Database } from '../../db/schema.js';
import { emitUserWebhook } from '../../webhooks/emit.js';

/** A passkey as the account's list shows it (no credential id, no key). */
export interface PasskeyListed {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A passkey as an assertion is checked against it. */
export interface StoredPasskey {
  id: string;
  userId: string;
  /** base64url. */
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
}

export interface NewPasskey {
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: readonly string[];
  backedUp: boolean;
  name: string;
}

const iso = (ms: number | string | null) =>
  ms === null ? null : new Date(Number(ms)).toISOString();

async function list(db: Kysely<Database>, userId: string): Promise<PasskeyListed[]> {
  const rows = await db
    .selectFrom('passkeys')
    .select(['id', 'name', 'created_at', 'last_used_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    createdAt: iso(row.created_at) as string,
    lastUsedAt: iso(row.last_used_at),
  }));
}

async function count(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await db
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The credential ids a user has, so registration does not enrol one authenticator twice. */
async function credentialIds(
  db: Kysely<Database>,
  userId: string,
): Promise<{ id: string; transports: string[] }[]> {
  const rows = await db
    .selectFrom('passkeys')
    .select(['credential_id', 'transports'])
    .where('user_id', '=', userId)
    .execute();
  return rows.map((row) => ({
    id: row.credential_id,
    transports: splitTransports(row.transports),
  }));
}

async function findByCredentialId(
  db: Kysely<Database>,
  credentialId: string,
): Promise<StoredPasskey | null> {
  const row = await db
    .selectFrom('passkeys')
    .selectAll()
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
  if (row === undefined) return null;
  return {
    id: row.id,
    userId: row.user_id,
    credentialId: row.credential_id,
    publicKey: row.public_key,
    counter: Number(row.counter),
    transports: splitTransports(row.transports),
    name: row.name,
  };
}

/**
 * Adds a passkey in `trx`, with its `second_factor.added` webhook; null when that credential
 * is registered already (anyone's).
 */
async function add(trx: Kysely<Database>, passkey: NewPasskey, at: number): Promise<string | null> {
  const id = randomUUID();
  const inserted = await trx
    .insertInto('passkeys')
    .values({
      id,
      user_id: passkey.userId,
      credential_id: passkey.credentialId,
      public_key: passkey.publicKey,
      counter: passkey.counter,
      transports: passkey.transports.join(','),
      backed_up: passkey.backedUp ? 1 : 0,
      name: passkey.name,
      created_at: at,
    })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) return null;
  await emitUserWebhook(trx, 'second_factor.added', passkey.userId, at, {
    factor: 'passkey',
    passkey: id,
  });
  return id;
}

/** Renames one of the user's passkeys; false when it is not theirs (or gone). */
async function rename(
  db: Kysely<Database>,
  userId: string,
  id: string,
  name: string,
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ name })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Removes one of the user's passkeys in `trx`, with its `second_factor.removed` webhook; its
 * name, or null when it is not theirs.
 */
async function remove(
  trx: Kysely<Database>,
  userId: string,
  id: string,
  at: number,
): Promise<string | null> {
  const row = await trx
    .deleteFrom('passkeys')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning('name')
    .executeTakeFirst();
  if (row === undefined) return null;
  await emitUserWebhook(trx, 'second_factor.removed', userId, at, {
    factor: 'passkey',
    passkey: id,
  });
  return row.name;
}

/**
 * Removes every passkey of the user in `trx` (an operator's reset), each with its
 * `second_factor.removed` webhook; their ids.
 */
export async function removeAllPasskeys(
  trx: Kysely<Database>,
  userId: string,
  at: number,
): Promise<string[]> {
  const rows = await trx
    .deleteFrom('passkeys')
    .where('user_id', '=', userId)
    .returning('id')
    .execute();
  for (const { id } of rows)
    await emitUserWebhook(trx, 'second_factor.removed', userId, at, {
      factor: 'passkey',
      passkey: id,
    });
  return rows.map((row) => row.id);
}

/**
 * Records a sign-in with the passkey: its new signature counter, only if the row still holds
 * the counter the assertion was checked against (two parallel assertions: one wins).
 */
async function used(
  db: Kysely<Database>,
  id: string,
  from: number,
  to: number,
  at: number,
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ counter: to, last_used_at: at })
    .where('id', '=', id)
    .where('counter', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Marks a challenge answered: true the first time, false ever after (one insert on its
 * primary key, atomic on both backends and across instances).
 */
async function spendChallenge(
  db: Kysely<Database>,
  hash: string,
  expiresAt: number,
): Promise<boolean> {
  const inserted = await db
    .insertInto('passkey_challenges_used')
    .values({ challenge_hash: hash, expires_at: expiresAt })
    .onConflict((oc) => oc.column('challenge_hash').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Forgets answered challenges past their expiry: their cookies are refused anyway. */
export function pruneSpentChallenges(db: Kysely<Database>, now: number): Promise<number> {
  return deleteInBatches(db, (limit) =>
    db
      .deleteFrom('passkey_challenges_used')
      .where('challenge_hash', 'in', (eb) =>
        eb
          .selectFrom('passkey_challenges_used')
          .select('challenge_hash')
          .where('expires_at', '<', now)
          .limit(limit),
      )
      .executeTakeFirst(),
  );
}

/** Every query passkeys make, on the tables of migration 012, over `db`. */
export function createPasskeyStore(db: Kysely<Database>) {
  return {
    list: (userId: string) => list(db, userId),
    count: (userId: string) => count(db, userId),
    credentialIds: (userId: string) => credentialIds(db, userId),
    findByCredentialId: (credentialId: string) => findByCredentialId(db, credentialId),
    /** In `trx`, with its webhook; null when that credential is registered already. */
    add,
    rename: (userId: string, id: string, name: string) => rename(db, userId, id, name),
    /** In `trx`, with its webhook; the passkey's name, or null when it is not theirs. */
    remove,
    /** In `trx` (an operator's reset), each with its webhook; their ids. */
    removeAll: removeAllPasskeys,
    used: (id: string, from: number, to: number, at: number) => used(db, id, from, to, at),
    spendChallenge: (hash: string, expiresAt: number) => spendChallenge(db, hash, expiresAt),
    prune: (now: number) => pruneSpentChallenges(db, now),
  };
}

function splitTransports(value: string): string[] {
  return value === '' ? [] : value.split(',');
}

export type PasskeyStore = ReturnType<typeof createPasskeyStore>;
