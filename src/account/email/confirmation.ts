import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { VerifiedAccount } from './verification-mail.js';
import { markVerified } from '../../users/writes.js';
import { accountHolding } from '../model/addresses.js';
import { changeCredential, type EventClient } from '../model/credential-change.js';
import { issueSecretMail, type SecretLinks } from '../model/secret-mail.js';
import { consume, findLive, type ConsumeRequest } from '../model/secrets.js';

/**
 * "Change e-mail" (accounts spec): queues the `email_change` secret and its mail to the NEW
 * address, in one transaction. The secret is bound to the account as it is now (its current
 * address, its credential version), so a password change or another address change since voids
 * it; `newEmail` is the address the confirmation makes the account's. The link goes to the same
 * page as a verification mail's, whose GET consumes nothing.
 */
export async function issueEmailChangeMail(
  db: Kysely<Database>,
  mail: MailQueue,
  account: VerifiedAccount,
  newEmail: string,
  links: SecretLinks,
): Promise<void> {
  await issueSecretMail(db, mail, {
    secret: {
      purpose: 'email_change',
      newEmail,
      userId: account.id,
      email: account.email,
      credentialVersion: account.credentialVersion,
    },
    kind: 'email-change',
    to: newEmail,
    // Nobody has proven this address yet: the account's name is its holder's free text
    // (URLs, bidi controls), and sent from the service's own address to any mailbox it would
    // be a phishing channel. The mail greets nobody, as the sign-up's does.
    name: '',
    pagePath: links.pages.verify,
    links,
  });
}

/**
 * What a mailed confirmation link is for, read without using it (the page's GET): an address
 * change, a verification, or null when it cannot be used (unknown, used, expired).
 */
export async function mailedLinkPurpose(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<'verify' | 'email_change' | null> {
  if ((await findLive(db, 'email_change', token, now)) !== null) return 'email_change';
  if ((await findLive(db, 'verify', token, now)) !== null) return 'verify';
  return null;
}

/** What a confirmation did: the address verified, changed, or nothing (the secret is void). */
export type Confirmation =
  | { outcome: 'verified'; email: string }
  | { outcome: 'changed'; email: string; endedSessions: number }
  /** The new address belongs to another account now (the secret is spent). */
  | { outcome: 'taken' }
  | null;

export interface ConfirmRequest {
  /** A link token, or the address the mail went to and its code. */
  secret: { token: string } | { email: string; code: string };
  /** The session posting the confirmation, if any: an address change keeps it, if it is the user's. */
  sessionId: string | null;
  links: SecretLinks;
  event: EventClient;
}

const purposes = ['verify', 'email_change'] as const;

/** PostgreSQL's unique_violation, or SQLite's "UNIQUE constraint failed" (extended code 2067). */
function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  return code === '23505' || errcode === 2067;
}

/**
 * Uses a `verify` or `email_change` secret, in one transaction. A verification marks the address
 * verified (a second verification of a verified address changes nothing and answers the same).
 * An address change: the address becomes the new one and counts as verified; the credential
 * version moves on (every other e-mailed secret and every sign-in in flight is void); every
 * session of the user ends except the one confirming, if it is theirs; `email_changed` is
 * recorded with both addresses; and the old address gets the notice with its "this wasn't me"
 * link. Null when the secret is not valid (a wrong code's try stays spent: the transaction
 * commits). A code guess spends a try of both kinds of code for that address: the person types
 * the address the mail went to, and either mail may be the one they hold.
 */
export async function confirmEmail(
  db: Kysely<Database>,
  mail: MailQueue,
  request: ConfirmRequest,
): Promise<Confirmation> {
  const at = request.links.now;
  try {
    return await db.transaction().execute(async (trx) => {
      for (const purpose of purposes) {
        const secret: ConsumeRequest = { purpose, ...request.secret };
        const token = await consume(trx, secret, at);
        if (token === null || token.userId === null || token.credentialVersion === null) continue;
        if (purpose === 'verify') {
          await markVerified(trx, token.userId, at);
          return { outcome: 'verified', email: token.email };
        }
        return changeAddress(trx, mail, request, {
          userId: token.userId,
          oldEmail: token.email,
          newEmail: token.newEmail ?? '',
          credentialVersion: token.credentialVersion,
        });
      }
      return null;
    });
  } catch (error) {
    // Another account took the address between the check and the write: nothing changed.
    if (isUniqueViolation(error)) return { outcome: 'taken' };
    throw error;
  }
}

async function changeAddress(
  trx: Kysely<Database>,
  mail: MailQueue,
  request: ConfirmRequest,
  change: { userId: string; oldEmail: string; newEmail: string; credentialVersion: number },
): Promise<Confirmation> {
  const at = request.links.now;
  const { userId, oldEmail, newEmail } = change;
  if (newEmail === '') return null;
  if ((await accountHolding(trx, newEmail)) !== null) return { outcome: 'taken' };
  const changed = await changeCredential(trx, {
    userId,
    at,
    expect: { credentialVersion: change.credentialVersion, enabled: true },
    set: { email: newEmail },
    keepSessionId: request.sessionId,
    event: {
      type: 'email_changed',
      client: request.event,
      detail: { from: oldEmail, to: newEmail },
    },
    // To the OLD address: its owner learns of the move, with the "this wasn't me" lock link.
    notice: {
      mail,
      kind: 'email-changed-notice',
      origin: request.links.origin,
      pages: request.links.pages,
      to: oldEmail,
      values: { newEmail },
    },
  });
  if (changed === null) return null;
  return { outcome: 'changed', email: newEmail, endedSessions: changed.endedSessions };
}
