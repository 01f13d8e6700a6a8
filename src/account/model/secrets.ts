import { createHash, createHmac, hkdfSync, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { AccountTokenPurpose, AccountTokensTable, Database } from '../../db/schema.js';

/*
 * E-mailed secrets (accounts spec, "Mail and e-mailed secrets"): a link token of 256 bits and,
 * for another device, a short code of 40 bits with at most five tries. Only digests are stored,
 * so a copy of the database signs nobody in through a link: SHA-256 of the token, and of the
 * code an HMAC under a key derived from AUTH_SECRET (40 bits are searched in minutes; without
 * the key a copy of the database cannot check a single guess). Each secret is bound
 * to its purpose, its user, the credential version and the address it was issued for: a
 * password change, a disable or an address change since its issue voids it. Single use: the
 * claim is one conditional UPDATE, so of two parallel consumes exactly one wins.
 */

/** 32 symbols (5 bits each) without the look-alikes 0/O and 1/I. */
export const codeAlphabet = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';
/** 8 symbols: 40 bits. */
export const codeLength = 8;
/** Guesses a code allows, the right one included. */
export const codeTriesMax = 5;
const tokenBytes = 32;

export interface IssueRequest {
  purpose: AccountTokenPurpose;
  /** Null for sign-up and invitation: the account does not exist yet. */
  userId: string | null;
  /** The normalised address the mail goes to. */
  email: string;
  /** The user's credential version now; null without a user. */
  credentialVersion: number | null;
  /**
   * For `email_change`: the address being verified (`email` is the current one). For `lock`:
   * the address the account moved to, when the notice goes to the one it moved from.
   */
  newEmail?: string;
  /** For `invite`: the name the operator gave; for `signup`: the name typed at sign-up. */
  name?: string;
  /** For `signup`: the argon2 hash of the password chosen, for the account it creates. */
  passwordHash?: string;
  ttlSeconds: number;
  /** A short code beside the link (default); invitations and lock links need none. */
  withCode?: boolean;
  /**
   * What the code is bound to beyond its row (a sign-in's asking browser): its digest is made
   * over it too, so the code matches only where the same value is given back.
   */
  codeBoundTo?: string;
}

export interface IssuedToken {
  id: string;
  /** The link's secret: goes into the mail, never into the database or a log. */
  token: string;
  /** The short code, or null when none was asked for. */
  code: string | null;
  expiresAt: number;
}

/** A consumed secret: what it was issued for. */
export interface AccountToken {
  id: string;
  purpose: AccountTokenPurpose;
  userId: string | null;
  email: string;
  newEmail: string | null;
  credentialVersion: number | null;
  createdAt: number;
  expiresAt: number;
}

export type ConsumeRequest =
  | { purpose: AccountTokenPurpose; token: string }
  /**
   * `email`: the address the mail with the code went to, as the person types it back: the
   * row's `email`, or for `email_change` its `newEmail` (that mail goes to the new address).
   */
  | { purpose: AccountTokenPurpose; email: string; code: string; codeBoundTo?: string };

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

// Keys for code digests, derived from AUTH_SECRET (each of its values: the first one keys new
// codes, any one matches, so a rotation keeps codes issued before it). Process-wide because
// the secrets are: set when the account routes are registered (keyCodeDigests).
let codeKeys: Buffer[] = [];

/**
 * Keys the code digests under `authSecrets` (AUTH_SECRET, newest first). Codes issued before
 * this change, as unkeyed SHA-256, no longer match: they expire within MAIL_TOKEN_TTL anyway.
 */
export function keyCodeDigests(authSecrets: readonly string[]): void {
  const keys = authSecrets.map((secret) =>
    Buffer.from(hkdfSync('sha256', secret, '', 'gatehouse account code digest v1', 32)),
  );
  // Keys of another configuration in this process (tests build several apps) still match.
  codeKeys = [...keys, ...codeKeys.filter((k) => !keys.some((n) => n.equals(k)))];
}

// The row's id in the code's digest: the same code of two rows never shares a digest. A code
// bound to more (`boundTo`) has it in the digest too.
function codeDigests(id: string, code: string, boundTo?: string): string[] {
  if (codeKeys.length === 0)
    throw new Error('code digests are not keyed: keyCodeDigests(AUTH_SECRET) was never called');
  const message = boundTo === undefined ? `${id}:${code}` : `${id}:${code}:${boundTo}`;
  return codeKeys.map((key) => createHmac('sha256', key).update(message).digest('hex'));
}
/** The digest a new code of the row `id` is kept as (under the newest key). */
export const codeDigest = (id: string, code: string, boundTo?: string) =>
  codeDigests(id, code, boundTo)[0] as string;

/** Whether `code` (as `readCode` reads it) is the one `hash` was made of for the row `id`. */
export const codeMatches = (id: string, code: string, hash: string, boundTo?: string) =>
  codeDigests(id, code, boundTo).includes(hash);

/** A new short code: `codeLength` symbols of `codeAlphabet`. */
export function newCode(): string {
  let code = '';
  for (let i = 0; i < codeLength; i += 1) code += codeAlphabet[randomInt(codeAlphabet.length)];
  return code;
}

/** A code as a person types it: any case, blanks and dashes anywhere. */
export function readCode(typed: string): string | null {
  const code = typed.replace(/[\s-]/gu, '').toUpperCase();
  if (code.length !== codeLength) return null;
  for (const symbol of code) if (!codeAlphabet.includes(symbol)) return null;
  return code;
}

/** Writes a new secret in the caller's transaction (the mail goes in the same one). */
export async function issue(
  trx: Kysely<Database>,
  request: IssueRequest,
  now: number = Date.now(),
): Promise<IssuedToken> {
  const id = randomUUID();
  const token = randomBytes(tokenBytes).toString('base64url');
  const code = request.withCode === false ? null : newCode();
  const expiresAt = now + request.ttlSeconds * 1000;
  await trx
    .insertInto('account_tokens')
    .values({
      id,
      user_id: request.userId,
      purpose: request.purpose,
      token_hash: sha256(token),
      code_hash: code === null ? null : codeDigest(id, code, request.codeBoundTo),
      code_tries_left: code === null ? 0 : codeTriesMax,
      credential_version: request.credentialVersion,
      email: request.email,
      new_email: request.newEmail ?? null,
      name: request.name ?? null,
      password_hash: request.passwordHash ?? null,
      expires_at: expiresAt,
      used_at: null,
      created_at: now,
    })
    .execute();
  return { id, token, code, expiresAt };
}

function toToken(row: Selectable<AccountTokensTable>): AccountToken {
  return {
    id: row.id,
    purpose: row.purpose,
    userId: row.user_id,
    email: row.email,
    newEmail: row.new_email,
    credentialVersion: row.credential_version === null ? null : Number(row.credential_version),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

/**
 * Marks one row used if it is still unused, unexpired and bound to the account as it is now:
 * with a user, that user still has the credential version and the address the secret was
 * issued for; without one (sign-up, invitation), no account holds the address yet. A `lock`
 * secret ("this wasn't me" in a notice) is bound to its user and the address it was mailed to,
 * not to the credential version: it exists because someone may have changed the password, and
 * that change must not void it. Once the account's address is another, a link in that
 * mailbox no longer speaks for the account (issue 25) — except the one the address change
 * itself mailed to the address it left (`new_email` set: the notice of a move). That one holds
 * whatever the account's address becomes, so the old owner can lock a hijacked account even
 * after the intruder moves it again. One statement, so a credential change and a second
 * consume cannot slip in between check and use.
 */
async function claim(
  trx: Kysely<Database>,
  id: string,
  purpose: AccountTokenPurpose,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('account_tokens')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) =>
      purpose === 'lock'
        ? eb.exists(
            eb
              .selectFrom('users')
              .select(sql.lit(1).as('one'))
              .whereRef('users.id', '=', 'account_tokens.user_id')
              .where((user) =>
                user.or([
                  user('users.email', '=', user.ref('account_tokens.email')),
                  user('account_tokens.new_email', 'is not', null),
                ]),
              ),
          )
        : eb.or([
            eb.and([
              eb('account_tokens.user_id', 'is not', null),
              eb.exists(
                eb
                  .selectFrom('users')
                  .select(sql.lit(1).as('one'))
                  .whereRef('users.id', '=', 'account_tokens.user_id')
                  .whereRef('users.credential_version', '=', 'account_tokens.credential_version')
                  .whereRef('users.email', '=', 'account_tokens.email'),
              ),
            ]),
            eb.and([
              eb('account_tokens.user_id', 'is', null),
              eb.not(
                eb.exists(
                  eb
                    .selectFrom('users')
                    .select(sql.lit(1).as('one'))
                    .whereRef('users.email', '=', 'account_tokens.email'),
                ),
              ),
            ]),
          ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Uses a secret once: the row when the link token (or the address and code) is valid for the
 * purpose, unused, unexpired and still bound to the account as it is; else null, one answer
 * for every failure (the route answers `invalid_token`). A code guess first spends a try of
 * every live code for that purpose and address, and only the rows it spent a try on can match:
 * parallel guesses cannot get past the five.
 */
export async function consume(
  trx: Kysely<Database>,
  request: ConsumeRequest,
  now: number = Date.now(),
): Promise<AccountToken | null> {
  if ('token' in request) {
    if (request.token.length === 0 || request.token.length > 128) return null;
    const row = await trx
      .selectFrom('account_tokens')
      .selectAll()
      .where('token_hash', '=', sha256(request.token))
      .where('purpose', '=', request.purpose)
      .executeTakeFirst();
    if (row === undefined || !(await claim(trx, row.id, row.purpose, now))) return null;
    return toToken(row);
  }
  const match = await matchCode(trx, request, now);
  if (match === null || !(await claim(trx, match.id, match.purpose, now))) return null;
  return match;
}

/**
 * A code guess without the use: spends a try of every live code for that purpose and address
 * (as `consume` does) and returns the row whose code it is, unclaimed, or null. For a secret
 * that needs one more check before it is used (a sign-up's password): the caller commits the
 * spent tries, checks, and then uses the row with `consumeById`.
 */
export async function matchCode(
  trx: Kysely<Database>,
  request: { purpose: AccountTokenPurpose; email: string; code: string; codeBoundTo?: string },
  now: number = Date.now(),
): Promise<AccountToken | null> {
  const code = readCode(request.code);
  if (code === null) return null;
  const spent = await trx
    .updateTable('account_tokens')
    .set((eb) => ({ code_tries_left: eb('code_tries_left', '-', 1) }))
    .where('purpose', '=', request.purpose)
    .where(request.purpose === 'email_change' ? 'new_email' : 'email', '=', request.email)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('code_tries_left', '>', 0)
    .where('code_hash', 'is not', null)
    .returningAll()
    .execute();
  const match = spent.find(
    (row) =>
      row.code_hash !== null && codeMatches(row.id, code, row.code_hash, request.codeBoundTo),
  );
  return match === undefined ? null : toToken(match);
}

/**
 * Uses the secret with this id once, with the same claim as `consume` (unused, unexpired, bound
 * to the account as it is; without a user, no account has the address): true when this call
 * used it.
 */
export async function consumeById(
  trx: Kysely<Database>,
  id: string,
  purpose: AccountTokenPurpose,
  now: number = Date.now(),
): Promise<boolean> {
  return claim(trx, id, purpose, now);
}

/** A secret that could still be used, as a page shows it. */
export interface LiveToken {
  id: string;
  /** Null for a secret that makes its account (sign-up, invitation, a new address's sign-in). */
  userId: string | null;
  email: string;
  /** For `invite`: the name the operator gave; for `signup`: the name typed. */
  name: string | null;
  /** For `signup`: the hash of the password chosen. */
  passwordHash: string | null;
  expiresAt: number;
  /** When it was issued (asked for). */
  createdAt: number;
}

/**
 * The secret a link names if it is unused and unexpired, without using it: read only, so a
 * page's GET and a mail scanner spend nothing, and a route hashes a new password only for a link
 * worth the work. The consume decides.
 */
export async function findLive(
  db: Kysely<Database>,
  purpose: AccountTokenPurpose,
  token: string,
  now: number,
): Promise<LiveToken | null> {
  if (token.length === 0 || token.length > 128) return null;
  const row = await db
    .selectFrom('account_tokens')
    .select(['id', 'user_id', 'email', 'name', 'password_hash', 'expires_at', 'created_at'])
    .where('token_hash', '=', sha256(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (row === undefined) return null;
  return {
    id: row.id,
    userId: row.user_id,
    email: row.email,
    name: row.name,
    passwordHash: row.password_hash,
    expiresAt: Number(row.expires_at),
    createdAt: Number(row.created_at),
  };
}

/** Deletes secrets that can no longer be used (expired or used before `before`). */
export async function pruneTokens(db: Kysely<Database>, before: number): Promise<void> {
  // One index per filter (migration 007), in short batches.
  for (const column of ['expires_at', 'used_at'] as const) {
    await deleteInBatches(db, (limit) =>
      db
        .deleteFrom('account_tokens')
        .where('id', 'in', (eb) =>
          eb.selectFrom('account_tokens').select('id').where(column, '<', before).limit(limit),
        )
        .executeTakeFirst(),
    );
  }
}
