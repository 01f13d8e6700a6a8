import type { Kysely } from 'kysely';
import { challengeDigest } from '../../challenge/challenge-store.js';
import type { Database } from '../../db/schema.js';
import { codeDigest, codeMatches, codeTriesMax, readCode } from '../model/secrets.js';

/*
 * The short code mailed with an enrolment's sign-in challenge (SECOND_FACTOR=required), kept on
 * the challenge's own row (src/challenge/challenge-store.ts).
 */

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
  const tokenHash = challengeDigest(token);
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
  const tokenHash = challengeDigest(token);
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
    .where('token_hash', '=', challengeDigest(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('code_tries_left', '>', 0)
    .where('code_hash', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
}
