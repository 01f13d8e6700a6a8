import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { deleteExpired } from '../../db/delete-in-batches.js';
import type { Database } from '../../db/schema.js';
import { emitUserWebhook } from '../../webhooks/emit.js';

/*
 * Identities at providers linked to accounts, and the offers an unknown identity leaves when
 * its address belongs to an account (migration 019). An identity is (provider, subject): never
 * looked up by address.
 */

/** An identity as its owner sees it (`GET /api/account/identities`). */
export interface Identity {
  id: string;
  provider: string;
  email: string | null;
  linkedAt: number;
  lastUsedAt: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** An identity as the APIs answer it (the account's own, the admin API's): times as ISO 8601. */
export function identityAnswer(identity: Identity) {
  return {
    id: identity.id,
    provider: identity.provider,
    email: identity.email,
    linkedAt: iso(identity.linkedAt),
    lastUsedAt: iso(identity.lastUsedAt),
  };
}

/** Who a provider says signed in: its name for the person, where that is unique, the address. */
export interface ProviderIdentity {
  provider: string;
  issuer: string;
  subject: string;
  email: string | null;
}

/** How long a browser has to prove the account an identity is offered to (ten minutes). */
export const linkOfferTtlSeconds = 600;

const digest = (token: string) => createHash('sha256').update(token).digest('base64url');

/** The account (provider, subject) is linked to, with the identity's id; null: none. */
export async function findIdentity(
  db: Kysely<Database>,
  identity: Pick<ProviderIdentity, 'provider' | 'issuer' | 'subject'>,
): Promise<{ id: string; userId: string } | null> {
  const row = await db
    .selectFrom('user_identities')
    .select(['id', 'user_id'])
    .where('provider', '=', identity.provider)
    .where('issuer', '=', identity.issuer)
    .where('subject', '=', identity.subject)
    .executeTakeFirst();
  return row === undefined ? null : { id: row.id, userId: row.user_id };
}

export async function listIdentities(db: Kysely<Database>, userId: string): Promise<Identity[]> {
  const rows = await db
    .selectFrom('user_identities')
    .select(['id', 'provider', 'email', 'linked_at', 'last_used_at'])
    .where('user_id', '=', userId)
    .orderBy('linked_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    provider: row.provider,
    email: row.email,
    linkedAt: Number(row.linked_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  }));
}

/**
 * Links the identity to the account in the caller's transaction, with its webhook; 'taken'
 * when that identity is linked already (to this account or another: the unique key decides).
 */
export async function insertIdentity(
  trx: Kysely<Database>,
  userId: string,
  identity: ProviderIdentity,
  at: number,
): Promise<string | 'taken'> {
  const id = randomUUID();
  const inserted = await trx
    .insertInto('user_identities')
    .values({
      id,
      user_id: userId,
      provider: identity.provider,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
      linked_at: at,
      last_used_at: at,
    })
    .onConflict((conflict) => conflict.columns(['provider', 'issuer', 'subject']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return 'taken';
  await emitUserWebhook(trx, 'user.updated', userId, at, {
    identity: { id, provider: identity.provider, change: 'linked' },
  });
  return id;
}

/** Removes one of the account's identities in the caller's transaction: its provider, or null. */
export async function deleteIdentity(
  trx: Kysely<Database>,
  userId: string,
  identityId: string,
  at: number,
): Promise<string | null> {
  const row = await trx
    .deleteFrom('user_identities')
    .where('id', '=', identityId)
    .where('user_id', '=', userId)
    .returning('provider')
    .executeTakeFirst();
  if (row === undefined) return null;
  await emitUserWebhook(trx, 'user.updated', userId, at, {
    identity: { id: identityId, provider: row.provider, change: 'unlinked' },
  });
  return row.provider;
}

export async function touchIdentity(db: Kysely<Database>, id: string, at: number): Promise<void> {
  await db.updateTable('user_identities').set({ last_used_at: at }).where('id', '=', id).execute();
}

/** Offers the identity to the account: the browser's token (its cookie), kept as SHA-256. */
export async function offerIdentity(
  db: Kysely<Database>,
  userId: string,
  identity: ProviderIdentity,
  now: number,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db
    .insertInto('identity_link_offers')
    .values({
      token_hash: digest(token),
      user_id: userId,
      provider: identity.provider,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
      expires_at: now + linkOfferTtlSeconds * 1000,
      used_at: null,
    })
    .execute();
  return token;
}

/**
 * Takes the live offer the token names, if it was made to `userId`, in the caller's
 * transaction: one conditional UPDATE, so it is taken once whatever races it.
 */
export async function takeOffer(
  trx: Kysely<Database>,
  token: string,
  userId: string,
  now: number,
): Promise<ProviderIdentity | null> {
  const row = await trx
    .updateTable('identity_link_offers')
    .set({ used_at: now })
    .where('token_hash', '=', digest(token))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['provider', 'issuer', 'subject', 'email'])
    .executeTakeFirst();
  return row === undefined ? null : row;
}

/**
 * Removes the account's identities linked at or after `since`, in the caller's transaction, each
 * with its webhook: a "this wasn't me" lock from a link's notice takes that link back.
 */
export async function removeIdentitiesSince(
  trx: Kysely<Database>,
  userId: string,
  since: number,
  at: number,
): Promise<{ id: string; provider: string }[]> {
  const rows = await trx
    .deleteFrom('user_identities')
    .where('user_id', '=', userId)
    .where('linked_at', '>=', since)
    .returning(['id', 'provider'])
    .execute();
  for (const row of rows)
    await emitUserWebhook(trx, 'user.updated', userId, at, {
      identity: { id: row.id, provider: row.provider, change: 'unlinked' },
    });
  return rows;
}

/** The live offer the token names: whose account it waits for, and the identity. */
export async function findOffer(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<(ProviderIdentity & { userId: string }) | null> {
  const row = await db
    .selectFrom('identity_link_offers')
    .select(['user_id', 'provider', 'issuer', 'subject', 'email'])
    .where('token_hash', '=', digest(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (row === undefined) return null;
  const { user_id: userId, ...identity } = row;
  return { userId, ...identity };
}

/** Forgets offers past their time. */
export async function pruneOffers(db: Kysely<Database>, now: number): Promise<void> {
  await deleteExpired(db, 'identity_link_offers', now);
}
