import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/*
 * Personal access tokens (adoption spec §4): `gat_`, 30 random base62 characters (178 bits),
 * then 6 of a CRC-32 of them, so a secret scanner (or this service, before any lookup) tells a
 * token from a typo. Kept only as SHA-256: the token is random, so a slow hash adds nothing.
 */

export const accessTokenPrefix = 'gat_';
const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const randomLength = 30;
const checksumLength = 6;
const tokenPattern = /^gat_[0-9A-Za-z]{36}$/;
/** Live tokens a user may hold at once. */
export const accessTokensPerUserMax = 50;
/** `last_used_at` is written at most this often per token. */
const lastUsedStepMs = 60_000;

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** `n` as `length` base62 digits, zero-padded. */
function base62Of(n: number, length: number): string {
  let out = '';
  for (let value = n; out.length < length; value = Math.floor(value / 62))
    out = base62[value % 62] + out;
  return out;
}

function randomBase62(length: number): string {
  let out = '';
  // Rejection sampling: bytes of 248 and over would favour the first digits.
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += base62[byte % 62];
    }
  }
  return out;
}

export function newAccessToken(): string {
  const random = randomBase62(randomLength);
  return `${accessTokenPrefix}${random}${base62Of(crc32(random), checksumLength)}`;
}

/** Whether `text` has a token's shape and checksum: nothing is looked up for one that has not. */
export function wellFormedAccessToken(text: string): boolean {
  if (!tokenPattern.test(text)) return false;
  const random = text.slice(accessTokenPrefix.length, accessTokenPrefix.length + randomLength);
  return text.endsWith(base62Of(crc32(random), checksumLength));
}

export const accessTokenHash = (token: string) =>
  createHash('sha256').update(token, 'utf8').digest('hex');

/** A token as its owner's list shows it. */
export interface AccessTokenView {
  id: string;
  name: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** A user's live tokens (not revoked, not expired), newest first. */
export async function listAccessTokens(
  db: Kysely<Database>,
  userId: string,
  now: number,
): Promise<AccessTokenView[]> {
  const rows = await db
    .selectFrom('access_tokens')
    .select(['id', 'name', 'created_at', 'expires_at', 'last_used_at'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    createdAt: iso(row.created_at) as string,
    expiresAt: iso(row.expires_at),
    lastUsedAt: iso(row.last_used_at),
  }));
}

/** A new token for the user, or null when they hold `accessTokensPerUserMax` live ones. */
export async function createAccessToken(
  trx: Kysely<Database>,
  made: { userId: string; name: string; expiresAt: number | null; at: number },
): Promise<{ id: string; token: string } | null> {
  const live = await trx
    .selectFrom('access_tokens')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('user_id', '=', made.userId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', made.at)]))
    .executeTakeFirstOrThrow();
  if (Number(live.count) >= accessTokensPerUserMax) return null;
  const token = newAccessToken();
  const id = `pat_${randomUUID().replaceAll('-', '')}`;
  await trx
    .insertInto('access_tokens')
    .values({
      id,
      user_id: made.userId,
      name: made.name,
      token_hash: accessTokenHash(token),
      created_at: made.at,
      expires_at: made.expiresAt,
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
  return { id, token };
}

/** Ends one of the user's live tokens; whether it was one. */
export async function revokeAccessToken(
  trx: Kysely<Database>,
  ending: { userId: string; id: string; at: number },
): Promise<boolean> {
  const result = await trx
    .updateTable('access_tokens')
    .set({ revoked_at: ending.at })
    .where('id', '=', ending.id)
    .where('user_id', '=', ending.userId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', ending.at)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Ends every token of the user: what ends all their sessions (a lock, a disable, …) ends these. */
export async function endAccessTokens(
  trx: Kysely<Database>,
  userId: string,
  at: number,
): Promise<void> {
  await trx
    .updateTable('access_tokens')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A live token's owner and what a session token says of it. */
export interface HeldAccessToken {
  id: string;
  userId: string;
  email: string;
  name: string;
  createdAt: number;
  expiresAt: number | null;
}

/**
 * The live token `presented` is (not revoked, not expired, its user enabled), or null; its
 * `last_used_at` is moved on (at most once a minute). A token of the wrong shape is not looked up.
 */
export async function useAccessToken(
  db: Kysely<Database>,
  presented: string,
  now: number,
): Promise<HeldAccessToken | null> {
  if (!wellFormedAccessToken(presented)) return null;
  const row = await db
    .selectFrom('access_tokens')
    .innerJoin('users', 'users.id', 'access_tokens.user_id')
    .select([
      'access_tokens.id',
      'access_tokens.user_id',
      'access_tokens.created_at',
      'access_tokens.expires_at',
      'access_tokens.last_used_at',
      'users.email',
      'users.name',
    ])
    .where('access_tokens.token_hash', '=', accessTokenHash(presented))
    .where('access_tokens.revoked_at', 'is', null)
    .where('users.disabled', '=', 0)
    .executeTakeFirst();
  if (row === undefined) return null;
  const expiresAt = row.expires_at === null ? null : Number(row.expires_at);
  if (expiresAt !== null && expiresAt <= now) return null;
  if (row.last_used_at === null || Number(row.last_used_at) <= now - lastUsedStepMs)
    await db
      .updateTable('access_tokens')
      .set({ last_used_at: now })
      .where('id', '=', row.id)
      .execute();
  return {
    id: row.id,
    userId: row.user_id,
    email: row.email,
    name: row.name,
    createdAt: Number(row.created_at),
    expiresAt,
  };
}
