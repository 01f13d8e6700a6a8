import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailKind, MailQueue } from '../../mail/mail-queue.js';
import { pagePaths } from '../paths.js';
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
  name: string;
  credentialVersion: number;
}

/**
 * Queues a security notice (accounts spec, "Security notices") in the caller's transaction, with
 * its "this wasn't me" link to `/account/lock`: a `lock` secret bound to the user only, so a
 * further change by an intruder cannot void the owner's link.
 */
export async function queueSecurityNotice(
  trx: Kysely<Database>,
  mail: MailQueue,
  notice: {
    kind: MailKind;
    account: NoticedAccount;
    origin: string;
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
      lockLink: `${notice.origin}${pagePaths.lock}?token=${lock.token}`,
    },
    expiresAt: new Date(lock.expiresAt),
  });
}
