import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { User } from '../../users/store.js';
import type { Client } from '../action.js';
import { record, type AccountEventType } from '../model/events.js';
import { queueSecurityNotice } from '../model/security-notice.js';

/** The record of a factor change and, when mail is on, its notice, in the caller's transaction. */
export async function recordFactorChange(
  trx: Kysely<Database>,
  change: {
    user: User;
    type: AccountEventType | null;
    client: Client;
    mail: MailQueue | undefined;
    now: number;
    /** The notice's sentence. */
    says: string;
    recoveryCodesLeft?: number;
  },
): Promise<void> {
  const { user, client } = change;
  if (change.type !== null)
    await record(trx, { userId: user.id, type: change.type, ip: client.ip, device: client.device });
  if (change.mail === undefined) return;
  await queueSecurityNotice(trx, change.mail, {
    kind: 'second-factor-notice',
    account: user,
    origin: client.origin,
    pages: client.pages,
    now: change.now,
    values: {
      change: change.says,
      ...(change.recoveryCodesLeft !== undefined && {
        recoveryCodesLeft: String(change.recoveryCodesLeft),
      }),
    },
  });
}
