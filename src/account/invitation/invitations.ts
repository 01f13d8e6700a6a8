import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { OutboxQueue } from '../../mail/outbox-queue.js';
import type { PagePaths } from '../paths.js';
import type { NewAccountEvent } from '../model/events.js';
import { expiresIn } from '../model/secret-mail.js';
import { consume, findLive, issue } from '../model/secrets.js';
import { accountHolding, createAccount } from '../model/addresses.js';

export interface NewInvitation {
  /** The normalised address. */
  email: string;
  /** The name the operator gave; empty: none (the person types one, or the address's local part). */
  name: string;
  /** The public origin the link is built on (AUTH_URL). */
  origin: string;
  /** Where the pages live on it (ACCOUNT_PAGES_PATH): the link goes to `pages.invitation`. */
  pages: PagePaths;
  ttlSeconds: number;
  now: number;
}

export type IssuedInvitation =
  | { outcome: 'taken' }
  | {
      outcome: 'issued';
      /** The invitation's id (not its secret): what the admin API answers with. */
      id: string;
      /** The link with its secret: for the mail or for the operator's screen, never a log. */
      link: string;
      expiresAt: number;
      /** Earlier live invitations of the address that this one voided. */
      voided: number;
      /** The outbox mail's id, when the invitation was mailed. */
      mailId?: string;
    };

/**
 * An operator's invitation, in one transaction: the address must have no account (`taken`
 * otherwise, nothing written), earlier live invitations of the address end (only the newest
 * link works), the `invite` secret is written (256 bits, hashed, single use, no code, no user
 * yet), and, when `mail` is given, the 'invitation' mail is queued with it. With `mail` absent
 * the link is only returned (`--print-link`).
 */
export async function issueInvitation(
  db: Kysely<Database>,
  mail: OutboxQueue | undefined,
  invitation: NewInvitation,
): Promise<IssuedInvitation> {
  const { email, now } = invitation;
  return db.transaction().execute(async (trx) => {
    if ((await accountHolding(trx, email)) !== null) return { outcome: 'taken' as const };
    const voided = await trx
      .updateTable('account_tokens')
      .set({ expires_at: now })
      .where('purpose', '=', 'invite')
      .where('email', '=', email)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    const issued = await issue(
      trx,
      {
        purpose: 'invite',
        userId: null,
        email,
        credentialVersion: null,
        ...(invitation.name !== '' && { name: invitation.name }),
        ttlSeconds: invitation.ttlSeconds,
        withCode: false,
      },
      now,
    );
    const link = `${invitation.origin}${invitation.pages.invitation}?token=${issued.token}`;
    const mailId =
      mail === undefined
        ? undefined
        : await mail.enqueueWithId(trx, {
            kind: 'invitation',
            to: email,
            values: {
              ...(invitation.name !== '' && { name: invitation.name }),
              link,
              ...expiresIn(invitation.ttlSeconds),
            },
            expiresAt: new Date(issued.expiresAt),
          });
    return {
      outcome: 'issued' as const,
      id: issued.id,
      link,
      expiresAt: issued.expiresAt,
      voided: Number(voided.numUpdatedRows),
      ...(mailId !== undefined && { mailId }),
    };
  });
}

/** A live invitation as its page shows it. */
export interface InvitationView {
  email: string;
  name: string | null;
  expiresAt: number;
}

/**
 * The invitation a link names, if it could still be accepted (unused, unexpired, no account has
 * the address): read only, so the page's GET and a mail scanner spend nothing, and the accept
 * route hashes a password only for a link worth the work. The consume decides.
 */
export async function findLiveInvitation(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<InvitationView | null> {
  const live = await findLive(db, 'invite', token, now);
  if (live === null) return null;
  if ((await accountHolding(db, live.email)) !== null) return null;
  return { email: live.email, name: live.name, expiresAt: live.expiresAt };
}

/**
 * Accepting, in one transaction: the invitation used (single use; it holds only while no
 * account has its address), the user created with the address counted as verified (the link
 * came through that mailbox, or from the operator's hand), the name from the form or else the
 * invitation's (else the address's local part, as `users add` does), and `account_created`
 * recorded with the invitation's time. No session is created. Returns the new user, or null
 * when the invitation is not valid or an account took the address meanwhile.
 */
export async function acceptInvitation(
  db: Kysely<Database>,
  accept: {
    token: string;
    passwordHash: string;
    name: string | undefined;
    now: number;
    event: Omit<NewAccountEvent, 'userId' | 'type'>;
  },
): Promise<{ userId: string; email: string } | null> {
  const at = accept.now;
  return db.transaction().execute(async (trx) => {
    const token = await consume(trx, { purpose: 'invite', token: accept.token }, at);
    if (token === null) return null;
    const invited = await trx
      .selectFrom('account_tokens')
      .select('name')
      .where('id', '=', token.id)
      .executeTakeFirst();
    return createAccount(trx, {
      verified: true,
      email: token.email,
      name: accept.name ?? invited?.name ?? null,
      passwordHash: accept.passwordHash,
      at,
      event: accept.event,
      via: { via: 'invitation', invitedBy: 'operator', invitedAt: token.createdAt },
    });
  });
}
