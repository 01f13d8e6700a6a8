import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailKind, MailQueue } from '../../mail/mail-queue.js';
import type { PagePaths } from '../paths.js';
import { issue } from './secrets.js';

/**
 * How long a notice's "this wasn't me" link stays usable: longer than a reset link, since a
 * notice may be read days later.
 */
export const lockLinkTtlSeconds = 7 * 86_400;

/** The account a notice is about, as it is after the change. */
export interface NoticedAccount {
  id: string;
  /** Where the notice goes: the address after a password change, the old one after a move. */
  email: string;
  /**
   * After a move, the address the account has now: the notice's lock link then keeps working
   * after further moves (model/secrets.ts), since the old owner has only this link.
   */
  movedTo?: string;
  name: string;
  credentialVersion: number;
}

/**
 * Queues a security notice (accounts spec, "Security notices") in the caller's transaction, with
 * its "this wasn't me" link to the lock page (`/account/lock`): a `lock` secret bound to the user and the
 * address it is mailed to (not the credential version), so a password change by an intruder
 * cannot void the owner's link, and the notice of a move holds after further moves.
 */
export async function queueSecurityNotice(
  trx: Kysely<Database>,
  mail: MailQueue,
  notice: {
    kind: MailKind;
    account: NoticedAccount;
    origin: string;
    /** Where the pages live on `origin` (ACCOUNT_PAGES_PATH). */
    pages: PagePaths;
    now: number;
    values?: Record<string, string>;
  },
): Promise<void> {
  const { account } = notice;
  const lock = await issue(
    trx,
    {
      purpose: 'lock',
      userId: account.id,
      email: account.email,
      credentialVersion: account.credentialVersion,
      ...(account.movedTo !== undefined && { newEmail: account.movedTo }),
      ttlSeconds: lockLinkTtlSeconds,
      withCode: false,
    },
    notice.now,
  );
  await mail.enqueue(trx, {
    kind: notice.kind,
    to: account.email,
    values: {
      ...(account.name !== '' && { name: account.name }),
      ...notice.values,
      lockLink: `${notice.origin}${notice.pages.lock}?token=${lock.token}`,
    },
    expiresAt: new Date(lock.expiresAt),
  });
}
