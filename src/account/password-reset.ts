import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { MailQueue } from '../mail/mail-queue.js';
import { revokeUserSessions } from '../sessions/session-store.js';
import { resetPagePath } from '../pages/reset-pages.js';
import type { User } from '../users/store.js';
import { record, type NewAccountEvent } from './events.js';
import { queueSecretMail, type SecretLinks } from './secret-mail.js';
import { queueSecurityNotice } from './security-notice.js';
import { consume, findLive, type ConsumeRequest } from './tokens.js';

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
  await db.transaction().execute(async (trx) => {
    await queueSecretMail(trx, mail, {
      secret: {
        purpose: 'reset',
        userId: user.id,
        email: user.email,
        credentialVersion: user.credentialVersion,
      },
      kind: 'password-reset',
      to: user.email,
      name: user.name,
      pagePath: resetPagePath,
      links,
    });
  });
}

/** Whether a reset link could still be used (unused, unexpired), without using it. */
export async function resetLinkLooksLive(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<boolean> {
  return (await findLive(db, 'reset', token, now)) !== null;
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
    event: Omit<NewAccountEvent, 'userId' | 'type'>;
  },
): Promise<{ email: string; endedSessions: number } | null> {
  const at = reset.links.now;
  return db.transaction().execute(async (trx) => {
    const token = await consume(trx, reset.secret, at);
    if (token === null || token.userId === null || token.credentialVersion === null) return null;
    const userId = token.userId;
    const updated = await trx
      .updateTable('users')
      .set((eb) => ({
        password_hash: reset.newHash,
        credential_version: eb('credential_version', '+', 1),
        // The secret came to this address and was used: its holder reads its mail. This also
        // ends a pre-hijack: someone who signed up with another person's address first holds
        // a password the owner's reset replaces (docs/behaviour.md).
        email_verified_at: eb.fn.coalesce('email_verified_at', eb.val(at)),
        updated_at: at,
      }))
      .where('id', '=', userId)
      .where('credential_version', '=', token.credentialVersion)
      .where('disabled', '=', 0)
      .returning(['email', 'name', 'credential_version'])
      .executeTakeFirst();
    if (updated === undefined) return null;
    const ended = Number((await revokeUserSessions(trx, userId, at)).numUpdatedRows);
    await record(trx, {
      ...reset.event,
      userId,
      type: 'password_reset',
      detail: { endedSessions: ended },
    });
    await queueSecurityNotice(trx, mail, {
      kind: 'password-changed-notice',
      account: {
        id: userId,
        email: updated.email,
        name: updated.name,
        credentialVersion: Number(updated.credential_version),
      },
      origin: reset.links.origin,
      now: at,
    });
    return { email: updated.email, endedSessions: ended };
  });
}
