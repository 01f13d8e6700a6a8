import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import { challengeTtlSeconds } from '../../challenge/challenge-cookie.js';
import { issueChallenge } from '../../challenge/challenge-store.js';
import type { User } from '../../users/store.js';
import type { PagePaths } from '../paths.js';
import { expiresIn } from '../model/secret-mail.js';
import { issue, matchCode, newCode, type IssuedToken } from '../model/secrets.js';
import { queueSecurityNotice } from '../model/security-notice.js';
import { setChallengeCode, tryChallengeCode } from './challenge-codes.js';
import { enrolmentPurpose } from './enrolment-step.js';

/*
 * What proves an enrolment at sign-in beyond the password (SECOND_FACTOR=required, issue 35):
 * whoever holds only the password must not turn on an authenticator app of their own, after
 * which the owner's sign-in and reset would need that app. So the enrolment challenge is opened
 * with a short code mailed to the account's address (the owner's mailbox), bound to that
 * challenge, and the enrolling post carries it beside a code of the new app. Where mail is off,
 * or for anyone the operator vouches for, an operator's one-time enrolment code stands in for
 * the mailed one. Both are 8 symbols (40 bits) with five tries, kept only as keyed digests
 * (src/account/model/secrets.ts), and every guess is also charged as a second-factor attempt.
 */

/** How long an operator's enrolment code works: a day to pass it on and use it. */
export const operatorEnrolmentCodeTtlSeconds = 86_400;

/** Where an enrolment's mail is sent from: the public origin and the pages on it. */
export interface EnrolmentMailLinks {
  origin: string;
  pages: PagePaths;
  now: number;
}

/**
 * Opens an enrolment at sign-in: its challenge and, when mail is on, the challenge's code and
 * its mail (with a "this wasn't me" link: a mail the owner did not ask for means someone has
 * their password), in one transaction, so a challenge has its code exactly when its mail is
 * queued. Returns the challenge for the browser's cookie.
 */
export function openEnrolment(
  db: Kysely<Database>,
  mail: MailQueue | undefined,
  user: User,
  links: EnrolmentMailLinks,
  firstProof = 'password',
): Promise<string> {
  return db.transaction().execute(async (trx) => {
    const token = await issueChallenge(trx, user, enrolmentPurpose, links.now, firstProof);
    if (mail === undefined) return token;
    const code = newCode();
    await setChallengeCode(trx, token, code);
    await queueSecurityNotice(trx, mail, {
      kind: 'signin-enrolment-code',
      account: user,
      origin: links.origin,
      pages: links.pages,
      now: links.now,
      values: { code, ...expiresIn(challengeTtlSeconds) },
    });
    return token;
  });
}

/** What a right enrolment code was: the challenge's mailed one, or an operator's (to spend). */
export type EnrolmentCodeProof = { by: 'mail' } | { by: 'operator'; tokenId: string };

/**
 * A guess at the enrolment's code, each candidate's try spent before it is compared: the code
 * mailed with this challenge, else a live operator's code of the account. The operator's is
 * only matched here; the enrolment spends it in its own transaction (`consumeById`).
 */
export async function proveEnrolmentCode(
  db: Kysely<Database>,
  request: { challenge: string; email: string; typed: string; now: number },
): Promise<EnrolmentCodeProof | null> {
  if (await tryChallengeCode(db, request.challenge, request.typed, request.now))
    return { by: 'mail' };
  const match = await matchCode(
    db,
    { purpose: 'enrolment', email: request.email, code: request.typed },
    request.now,
  );
  return match === null ? null : { by: 'operator', tokenId: match.id };
}

/**
 * An operator's one-time enrolment code for `user`, in the caller's transaction: bound to the
 * account, its address and credential version (a password change or an address change voids
 * it), single use, expiring; earlier live ones of the account stop working. Returns the code,
 * shown once to the operator and never stored in clear.
 */
export async function issueOperatorEnrolmentCode(
  trx: Kysely<Database>,
  user: Pick<User, 'id' | 'email' | 'credentialVersion'>,
  now: number,
): Promise<IssuedToken & { code: string }> {
  await trx
    .updateTable('account_tokens')
    .set({ expires_at: now })
    .where('purpose', '=', 'enrolment')
    .where('user_id', '=', user.id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .execute();
  const issued = await issue(
    trx,
    {
      purpose: 'enrolment',
      userId: user.id,
      email: user.email,
      credentialVersion: user.credentialVersion,
      ttlSeconds: operatorEnrolmentCodeTtlSeconds,
    },
    now,
  );
  if (issued.code === null) throw new Error('an enrolment code was issued without its code');
  return { ...issued, code: issued.code };
}
