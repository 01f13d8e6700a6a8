import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { User } from '../../users/store.js';
import { changeCredential, type EventClient } from '../model/credential-change.js';
import { issueSecretMail, type SecretLinks } from '../model/secret-mail.js';
import { consume, findLive, type ConsumeRequest } from '../model/secrets.js';
import { HttpError } from '../../http/errors.js';
import { removeYoungFactors } from './young-factors.js';

/**
 * "Forgot password" for a user that exists and is enabled: a reset secret and its mail in one
 * transaction, the link to the reset page.
 */
export async function issueResetMail(
  db: Kysely<Database>,
  mail: MailQueue,
  user: User,
  links: SecretLinks,
): Promise<void> {
  await issueSecretMail(db, mail, {
    secret: {
      purpose: 'reset',
      userId: user.id,
      email: user.email,
      credentialVersion: user.credentialVersion,
    },
    kind: 'password-reset',
    to: user.email,
    name: user.name,
    pagePath: links.pages.reset,
    links,
  });
}

/**
 * The address of a reset link's account while the link could still be used (unused,
 * unexpired), without using it; null otherwise.
 */
export async function liveResetLinkEmail(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<string | null> {
  return (await findLive(db, 'reset', token, now))?.email ?? null;
}

/**
 * The reset itself, in one transaction: the secret used (single use, still bound to the
 * credential version and address it was issued for), the new hash, the address marked verified
 * (the mailbox was proven), the credential version
 * moved on (every other e-mailed secret and every sign-in in flight is void), every session
 * ended, the `password_reset` event, and the notice with its "this wasn't me" link queued.
 * No session is created. Returns the user's address, or null when the secret is not valid
 * (a wrong code's try stays spent: the transaction commits).
 */
export async function resetPassword(
  db: Kysely<Database>,
  mail: MailQueue,
  reset: {
    secret: ConsumeRequest;
    newHash: string;
    links: SecretLinks;
    event: EventClient;
    /**
     * No second factor was asked, as every one the account has is younger than the secret:
     * they are removed with the reset (src/account/reset/young-factors.ts).
     */
    dropYoungFactors?: boolean;
  },
): Promise<{ email: string; endedSessions: number } | null> {
  const at = reset.links.now;
  return db.transaction().execute(async (trx) => {
    const token = await consume(trx, reset.secret, at);
    if (token === null || token.userId === null || token.credentialVersion === null) return null;
    const changed = await changeCredential(trx, {
      userId: token.userId,
      at,
      expect: { credentialVersion: token.credentialVersion, enabled: true },
      // The secret came to this address and was used: its holder reads its mail. This also
      // ends a pre-hijack: someone who signed up with another person's address first holds a
      // password the owner's reset replaces (docs/behaviour.md).
      set: { passwordHash: reset.newHash, emailProven: true },
      event: { type: 'password_reset', client: reset.event },
      notice: {
        mail,
        kind: 'password-changed-notice',
        origin: reset.links.origin,
        pages: reset.links.pages,
      },
    });
    if (changed === null) return null;
    if (reset.dropYoungFactors === true) {
      const removed = await removeYoungFactors(trx, {
        userId: token.userId,
        requestedAt: token.createdAt,
        account: changed,
        client: reset.event,
        mail,
        links: reset.links,
        now: at,
      });
      // A factor as old as the secret after all: it is asked for, and nothing changes.
      if (removed === null)
        throw new HttpError('second_factor_required', {}, undefined, { field: 'otp' });
    }
    return { email: changed.email, endedSessions: changed.endedSessions };
  });
}
