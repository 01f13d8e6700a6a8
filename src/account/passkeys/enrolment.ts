import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { Client } from '../action.js';
import { lockFactors, lockedFactors, voidChallenges } from '../model/factor-lock.js';
import { record } from '../model/events.js';
import { queueSecurityNotice, type NoticedAccount } from '../model/security-notice.js';
import type { NewPasskey, PasskeyStore } from './passkey-store.js';

/*
 * A passkey added or removed: the change, its event and its security notice (with the "this
 * wasn't me" link) in one transaction, so none is written without the others.
 */

export interface EnrolmentPorts {
  db: Kysely<Database>;
  store: PasskeyStore;
  /** The outbox when mail is on; without it no notice is queued. */
  mail: MailQueue | undefined;
  now: () => number;
}

type Account = Omit<NoticedAccount, 'movedTo'>;

/** Adds a verified credential to `account`; null when that credential is registered already. */
export async function addPasskey(
  ports: EnrolmentPorts,
  account: Account,
  passkey: Omit<NewPasskey, 'userId'>,
  client: Client,
): Promise<string | null> {
  const at = ports.now();
  return ports.db.transaction().execute(async (trx) => {
    await lockFactors(trx, account.id);
    const id = await ports.store.add(trx, { ...passkey, userId: account.id }, at);
    if (id === null) return null;
    // A challenge a password left may no longer be taken for what it was issued for.
    await voidChallenges(trx, account.id, at);
    await record(trx, {
      ...client,
      userId: account.id,
      type: 'passkey_added',
      detail: { passkey: id },
    });
    if (ports.mail !== undefined) {
      await queueSecurityNotice(trx, ports.mail, {
        kind: 'passkey-added-notice',
        account,
        origin: client.origin,
        pages: client.pages,
        now: at,
        values: { passkeyName: passkey.name },
      });
    }
    return id;
  });
}

/**
 * Removes one of the account's passkeys: 'missing' when it is not theirs (or gone already);
 * with `keepLastFactor` (SECOND_FACTOR=required) 'last' when it is the account's last second
 * factor, checked under the account's lock in the same transaction, so two removals racing
 * cannot leave none.
 */
export async function removePasskey(
  ports: EnrolmentPorts,
  account: Account,
  passkeyId: string,
  client: Client,
  keepLastFactor = false,
): Promise<'removed' | 'missing' | 'last'> {
  const at = ports.now();
  return ports.db.transaction().execute(async (trx) => {
    await lockFactors(trx, account.id);
    if (keepLastFactor) {
      const mine = await trx
        .selectFrom('passkeys')
        .select('id')
        .where('id', '=', passkeyId)
        .where('user_id', '=', account.id)
        .executeTakeFirst();
      if (mine === undefined) return 'missing';
      const factors = await lockedFactors(trx, account.id);
      if (!factors.totp && factors.passkeys <= 1) return 'last';
    }
    const name = await ports.store.remove(trx, account.id, passkeyId, at);
    if (name === null) return 'missing';
    await voidChallenges(trx, account.id, at);
    await record(trx, {
      ...client,
      userId: account.id,
      type: 'passkey_removed',
      detail: { passkey: passkeyId },
    });
    if (ports.mail !== undefined) {
      await queueSecurityNotice(trx, ports.mail, {
        kind: 'passkey-removed-notice',
        account,
        origin: client.origin,
        pages: client.pages,
        now: at,
        values: { passkeyName: name },
      });
    }
    return 'removed';
  });
}
