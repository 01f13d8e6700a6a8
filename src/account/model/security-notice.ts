import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailKind, MailQueue } from '../../mail/mail-queue.js';
import type { PagePaths } from '../paths.js';
import { record, type AccountEventType } from './events.js';
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

/** The account a notice goes to as it is now, read in the caller's transaction; null: gone. */
export async function noticedAccount(
  trx: Kysely<Database>,
  userId: string,
): Promise<Omit<NoticedAccount, 'movedTo'> | null> {
  const row = await trx
    .selectFrom('users')
    .select(['email', 'name', 'credential_version'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (row === undefined) return null;
  const { email, name } = row;
  return { id: userId, email, name, credentialVersion: Number(row.credential_version) };
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

/** A change of the account's ways in: its event and the notice its owner is mailed. */
export interface NoticedChange {
  type: AccountEventType;
  detail: Record<string, unknown>;
  kind: MailKind;
  values: Record<string, string>;
}

/**
 * Records `change` (the account's event, and so the audit log) and, with mail on, queues its
 * notice with the "this wasn't me" link, both in the caller's transaction.
 */
export async function recordWithNotice(
  trx: Kysely<Database>,
  mail: MailQueue | undefined,
  account: Omit<NoticedAccount, 'movedTo'>,
  client: { ip: string; device: string; origin: string; pages: PagePaths },
  change: NoticedChange & { now: number },
): Promise<void> {
  await record(trx, {
    ip: client.ip,
    device: client.device,
    userId: account.id,
    type: change.type,
    detail: change.detail,
  });
  if (mail === undefined) return;
  await queueSecurityNotice(trx, mail, {
    kind: change.kind,
    account,
    origin: client.origin,
    pages: client.pages,
    now: change.now,
    values: change.values,
  });
}
