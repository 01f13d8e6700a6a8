import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { ChallengePurpose } from '../../auth/signin/authorize.js';
import type { Database } from '../../db/schema.js';
import { challengeTtlSeconds } from '../../pages/signin/second-step-cookie.js';
import { codeDigest, codeMatches, codeTriesMax, readCode } from '../model/secrets.js';

/*
 * The second step without the password again: after a right password for an account with
 * TOTP, the browser gets a challenge (a cookie, src/pages/signin/second-step-cookie.ts) that stands for
 * that proof for five minutes, so the sign-in page (or an app) sends only the code next and
 * nobody holds the password past its one request. Kept as SHA-256 only, bound to the account's
 * credential version (a password change or reset voids it), and used once: the sign-in that
 * succeeds with it spends it by one conditional UPDATE. It records what it was issued for
 * (ChallengePurpose) and is taken for that alone; any change of the account's second factors
 * voids every live one (voidChallenges).
 */

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

export async function issueChallenge(
  db: Kysely<Database>,
  user: { id: string; credentialVersion: number },
  purpose: ChallengePurpose,
  now: number,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db
    .insertInto('signin_challenges')
    .values({
      token_hash: sha256(token),
      user_id: user.id,
      credential_version: user.credentialVersion,
      expires_at: now + challengeTtlSeconds * 1000,
      used_at: null,
      purpose,
    })
    .execute();
  return token;
}

/** The account a live challenge stands for, at the credential version it was issued for. */
export async function findChallenge(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<{ userId: string; credentialVersion: number; purpose: ChallengePurpose } | null> {
  if (token.length === 0 || token.length > 128) return null;
  const row = await db
    .selectFrom('signin_challenges')
    .select(['user_id', 'credential_version', 'purpose'])
    .where('token_hash', '=', sha256(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row === undefined
    ? null
    : {
        userId: row.user_id,
        credentialVersion: Number(row.credential_version),
        purpose: row.purpose as ChallengePurpose,
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
    .where('token_hash', '=', sha256(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now);
  if (purpose !== undefined) update = update.where('purpose', '=', purpose);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Gives a challenge the short code mailed with it (SECOND_FACTOR=required's enrolment), in the
 * caller's transaction: kept as a keyed digest bound to the challenge's row (so a code of one
 * challenge never matches another), with `codeTriesMax` guesses. It lives as long as the
 * challenge and is spent with it.
 */
export async function setChallengeCode(
  trx: Kysely<Database>,
  token: string,
  code: string,
): Promise<void> {
  const tokenHash = sha256(token);
  await trx
    .updateTable('signin_challenges')
    .set({ code_hash: codeDigest(tokenHash, code), code_tries_left: codeTriesMax })
    .where('token_hash', '=', tokenHash)
    .execute();
}

/**
 * A guess at the live challenge's mailed code: one of its tries is spent first, in the same
 * statement that reads the digest, so parallel guesses cannot get past the limit; then the
 * digest is compared. True when `typed` is its code.
 */
export async function tryChallengeCode(
  db: Kysely<Database>,
  token: string,
  typed: string,
  now: number,
): Promise<boolean> {
  const code = readCode(typed);
  if (code === null || token.length === 0 || token.length > 128) return false;
  const tokenHash = sha256(token);
  const row = await db
    .updateTable('signin_challenges')
    .set((eb) => ({ code_tries_left: eb('code_tries_left', '-', 1) }))
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('code_tries_left', '>', 0)
    .where('code_hash', 'is not', null)
    .returning('code_hash')
    .executeTakeFirst();
  return row?.code_hash != null && codeMatches(tokenHash, code, row.code_hash);
}

/** Whether the live challenge has a mailed code with tries left. */
export async function challengeCodeLive(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<boolean> {
  if (token.length === 0 || token.length > 128) return false;
  const row = await db
    .selectFrom('signin_challenges')
    .select('token_hash')
    .where('token_hash', '=', sha256(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('code_tries_left', '>', 0)
    .where('code_hash', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes challenges past their time (the account wing's prune). */
export async function pruneChallenges(db: Kysely<Database>, before: number): Promise<void> {
  await deleteInBatches(db, (limit) =>
    db
      .deleteFrom('signin_challenges')
      .where('token_hash', 'in', (eb) =>
        eb
          .selectFrom('signin_challenges')
          .select('token_hash')
          .where('expires_at', '<', before)
          .limit(limit),
      )
      .executeTakeFirst(),
  );
}
