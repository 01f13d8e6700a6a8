import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { Client } from '../action.js';
import {
  holds,
  lockFactors,
  lockedFactors,
  lockedWaysIn,
  voidChallenges,
} from '../model/factor-lock.js';
import { recordWithNotice, type NoticedAccount } from '../model/security-notice.js';
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
    await recordWithNotice(trx, ports.mail, account, client, {
      type: 'passkey_added',
      detail: { passkey: id },
      kind: 'passkey-added-notice',
      values: { passkeyName: passkey.name },
      now: at,
    });
    return id;
  });
}

/**
 * Removes one of the account's passkeys: 'missing' when it is not theirs (or gone already);
 * 'last-way-in' when the account would have no way to sign in left (no password, no identity);
 * with `keepLastFactor` (SECOND_FACTOR=required) 'last' when it is the account's last second
 * factor. Checked under the account's lock in the same transaction, so two removals racing
 * cannot leave none.
 */
export async function removePasskey(
  ports: EnrolmentPorts,
  account: Account,
  passkeyId: string,
  client: Client,
  keepLastFactor = false,
): Promise<'removed' | 'missing' | 'last' | 'last-way-in'> {
  const at = ports.now();
  return ports.db.transaction().execute(async (trx) => {
    await lockFactors(trx, account.id);
    if (!(await holds(trx, 'passkeys', passkeyId, account.id))) return 'missing';
    if ((await lockedWaysIn(trx, account.id)) <= 1) return 'last-way-in';
    if (keepLastFactor) {
      const factors = await lockedFactors(trx, account.id);
      if (!factors.totp && factors.passkeys <= 1) return 'last';
    }
    const name = await ports.store.remove(trx, account.id, passkeyId, at);
    if (name === null) return 'missing';
    await voidChallenges(trx, account.id, at);
    await recordWithNotice(trx, ports.mail, account, client, {
      type: 'passkey_removed',
      detail: { passkey: passkeyId },
      kind: 'passkey-removed-notice',
      values: { passkeyName: name },
      now: at,
    });
    return 'removed';
  });
}
