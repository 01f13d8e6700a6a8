import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import { changeCredential, type EventClient } from '../model/credential-change.js';
import { record } from '../model/events.js';
import { consume, findLive } from '../model/secrets.js';
import { removeIdentitiesSince } from '../identities/identity-store.js';
import { forgetPlacesSince } from '../new-device/places.js';

/**
 * "This wasn't me" (accounts spec, "Security notices"), in one transaction: the notice's `lock`
 * secret used (single use, bound to its user only: see model/secrets.ts), the account disabled with its
 * credential version moved on (so every other e-mailed secret, such as a reset link someone else
 * asked for, and every sign-in in flight is void), every session ended, and `account_locked`
 * recorded, and the `account-locked-notice` queued to the account's current address (what
 * happened and that the operator unlocks it): a lock by whoever else holds a link is not
 * silent. Identities linked since the link was mailed are unlinked (a link's notice carries one),
 * and the devices and networks first signed in from since are forgotten (src/account/new-device/).
 * An account already disabled stays so and answers the same: the holder of a valid
 * link learns nothing new. Returns the user's id, or null when the secret is not valid.
 */
export async function lockAccount(
  db: Kysely<Database>,
  lock: { token: string; now: number; event: EventClient; mail: MailQueue },
): Promise<{ userId: string; endedSessions: number } | null> {
  const at = lock.now;
  return db.transaction().execute(async (trx) => {
    const token = await consume(trx, { purpose: 'lock', token: lock.token }, at);
    if (token === null || token.userId === null) return null;
    const userId = token.userId;
    const changed = await changeCredential(trx, {
      userId,
      at,
      set: { disabled: true },
      event: { type: 'account_locked', client: lock.event },
    });
    // The claim saw the user in this transaction; a removal since rolls nothing forward.
    if (changed === null) return null;
    // An identity linked since the link was mailed (its notice is one such mail) is taken back:
    // re-enabled, the account must not open to it again.
    for (const removed of await removeIdentitiesSince(trx, userId, token.createdAt, at))
      await record(trx, {
        ...lock.event,
        userId,
        type: 'identity_unlinked',
        detail: { identity: removed.id, provider: removed.provider, reason: 'account_locked' },
      });
    // So are the devices and networks first signed in from since: back in, they are new again.
    await forgetPlacesSince(trx, userId, token.createdAt);
    // No lock link in it: the account is locked already, and a link would be one more secret.
    await lock.mail.enqueue(trx, {
      kind: 'account-locked-notice',
      to: changed.email,
      values: changed.name === '' ? {} : { name: changed.name },
    });
    return { userId, endedSessions: changed.endedSessions };
  });
}

/** Whether a lock link could still be used (unused, unexpired), without using it. */
export async function lockLinkLooksLive(
  db: Kysely<Database>,
  token: string,
  now: number,
): Promise<boolean> {
  return (await findLive(db, 'lock', token, now)) !== null;
}
