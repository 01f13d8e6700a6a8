import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { deleteExpired } from '../db/delete-in-batches.js';
import type { Database } from '../db/schema.js';
import { challengeTtlSeconds } from './challenge-cookie.js';

/*
 * The next step of a sign-in without the password again: after a right password that a check
 * refused with a code opening a challenge (a second factor asked for, an enrolment, a passkey
 * to follow), the browser gets a challenge (a cookie, ./challenge-cookie.ts) that stands for
 * that proof for five minutes, so the sign-in page (or an app) sends only the next step and
 * nobody holds the password past its one request. Kept as SHA-256 only, bound to the account's
 * credential version (a password change or reset voids it), and used once: the sign-in that
 * succeeds with it spends it by one conditional UPDATE. It records what it was issued for (its
 * purpose, named by the way in that opens it) and is taken for that alone; any change of the
 * account's second factors voids every live one (voidChallenges).
 */

/** What a challenge was issued for, as the way in that opens it names it. */
export type ChallengePurpose = string;

/** The digest a challenge is kept under (its row's key; a code bound to it is keyed by it). */
export const challengeDigest = (token: string) =>
  createHash('sha256').update(token).digest('base64url');

export async function issueChallenge(
  db: Kysely<Database>,
  user: { id: string; credentialVersion: number },
  purpose: ChallengePurpose,
  now: number,
  firstProof = 'password',
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db
    .insertInto('signin_challenges')
    .values({
      token_hash: challengeDigest(token),
      user_id: user.id,
      credential_version: user.credentialVersion,
      expires_at: now + challengeTtlSeconds * 1000,
      used_at: null,
      purpose,
      first_proof: firstProof,
    })
    .execute();
  return token;
}

/** The account a live challenge stands for, at the credential version it was issued for. */
export async function findChallenge(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<{
  userId: string;
  credentialVersion: number;
  purpose: ChallengePurpose;
  firstProof: string;
} | null> {
  if (token.length === 0 || token.length > 128) return null;
  const row = await db
    .selectFrom('signin_challenges')
    .select(['user_id', 'credential_version', 'purpose', 'first_proof'])
    .where('token_hash', '=', challengeDigest(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row === undefined
    ? null
    : {
        userId: row.user_id,
        credentialVersion: Number(row.credential_version),
        purpose: row.purpose,
        firstProof: row.first_proof,
      };
}

/** Spends the challenge (only one issued for `purpose`, when given): true for one caller, once. */
export async function spendChallenge(
  db: Kysely<Database>,
  token: string,
  now: number,
  purpose?: ChallengePurpose,
): Promise<boolean> {
  let update = db
    .updateTable('signin_challenges')
    .set({ used_at: now })
    .where('token_hash', '=', challengeDigest(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now);
  if (purpose !== undefined) update = update.where('purpose', '=', purpose);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes challenges past their time (the account wing's prune). */
export async function pruneChallenges(db: Kysely<Database>, before: number): Promise<void> {
  await deleteExpired(db, 'signin_challenges', before);
}
