import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { MailQueue } from '../mail/mail-queue.js';
import { revokeUserSessions } from '../sessions/session-store.js';
import type { User } from '../users/store.js';
import { record, type NewAccountEvent } from './events.js';
import { consume, issue, type ConsumeRequest } from './tokens.js';

/**
 * How long a notice's "this wasn't me" link stays usable: longer than a reset link, since a
 * notice may be read days later (the lock flow, later work, may set its own).
 */
export const lockLinkTtlSeconds = 7 * 86_400;

export interface ResetMailLinks {
  /** The public origin links are built on (AUTH_URL, or the request's in development). */
  origin: string;
  ttlSeconds: number;
  now: number;
}

/**
 * "Forgot password" for a user that exists and is enabled: a reset secret and its mail in one
 * transaction (the outbox), so a mail is queued exactly when its secret exists. The link goes
 * to the page, whose GET consumes nothing; the token rides in the query because a page without
 * JavaScript never sees a fragment, and the page sends `Referrer-Policy: no-referrer`.
 */
export async function issueResetMail(
  db: Kysely<Database>,
  mail: MailQueue,
  user: User,
  links: ResetMailLinks,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const issued = await issue(
      trx,
      {
        purpose: 'reset',
        userId: user.id,
        email: user.email,
        credentialVersion: user.credentialVersion,
        ttlSeconds: links.ttlSeconds,
      },
      links.now,
    );
    await mail.enqueue(trx, {
      kind: 'password-reset',
      to: user.email,
      values: {
        ...(user.name !== '' && { name: user.name }),
        link: `${links.origin}/account/password/reset?token=${issued.token}`,
        ...(issued.code !== null && { code: issued.code }),
        expiresInMinutes: String(Math.round(links.ttlSeconds / 60)),
      },
      expiresAt: new Date(issued.expiresAt),
    });
  });
}

/**
 * Whether a reset link could still be used (unused, unexpired), without using it: read only, so
 * the route hashes a new password only for a link worth the work. The consume decides.
 */
export async function resetLinkLooksLive(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<boolean> {
  if (token.length === 0 || token.length > 128) return false;
  const row = await db
    .selectFrom('account_tokens')
    .select('id')
    .where('token_hash', '=', createHash('sha256').update(token).digest('hex'))
    .where('purpose', '=', 'reset')
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
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
    links: ResetMailLinks;
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
    const lock = await issue(
      trx,
      {
        purpose: 'lock',
        userId,
        email: updated.email,
        credentialVersion: Number(updated.credential_version),
        ttlSeconds: lockLinkTtlSeconds,
        withCode: false,
      },
      at,
    );
    await mail.enqueue(trx, {
      kind: 'password-changed-notice',
      to: updated.email,
      values: {
        ...(updated.name !== '' && { name: updated.name }),
        lockLink: `${reset.links.origin}/account/lock?token=${lock.token}`,
      },
      expiresAt: new Date(lock.expiresAt),
    });
    return { email: updated.email, endedSessions: ended };
  });
}
