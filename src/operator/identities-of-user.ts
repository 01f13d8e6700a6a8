import {
  deleteIdentity,
  listIdentities,
  type Identity,
} from '../account/identities/identity-store.js';
import { pagePathsUnder } from '../account/paths.js';
import { queueSecurityNotice } from '../account/model/security-notice.js';
import type { MailQueue } from '../mail/mail-queue.js';
import { readUser } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

export type { Identity };
export { identityAnswer } from '../account/identities/identity-store.js';

/** The user's identities at providers (provider, address given, when linked and last used). */
export async function listIdentitiesOfUser(
  ports: OperatorPorts,
  request: { userId: string },
): Promise<Identity[] | 'missing'> {
  const user = await readUser(ports.db, request.userId);
  if (user === null) return 'missing';
  return listIdentities(ports.db, user.id);
}

/** Where the owner's notice of a removal goes out from; without it (mail off) none is sent. */
export interface RemovalNotice {
  mail: MailQueue;
  /** The public origin the notice's "this wasn't me" link is built on (AUTH_URL). */
  origin: string;
  /** ACCOUNT_PAGES_PATH: where that link leads on the origin. */
  accountPagesPath?: string | undefined;
  /** The provider's name as configured, by id. */
  names: (provider: string) => string;
}

/**
 * Removes one identity of the user (it no longer signs in), with `identity_unlinked`, the actor,
 * its webhook and (with `notice`) the owner's mail with the "this wasn't me" link, in one
 * transaction; 'missing' when the user has no such identity. An operator may remove the last
 * way in: the account then signs in after a password reset.
 */
export function removeIdentityOfUser(
  ports: OperatorPorts & { notice?: RemovalNotice | undefined },
  request: { userId: string; identityId: string; actor: Actor },
): Promise<'removed' | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const at = ports.now();
    const provider = await deleteIdentity(trx, request.userId, request.identityId, at);
    if (provider === null) return 'missing';
    await recordOperatorEvent(trx, request.actor, request.userId, 'identity_unlinked', {
      identity: request.identityId,
      provider,
    });
    const notice = ports.notice;
    const user = notice === undefined ? null : await readUser(trx, request.userId);
    if (notice !== undefined && user !== null)
      await queueSecurityNotice(trx, notice.mail, {
        kind: 'identity-unlinked-notice',
        account: user,
        origin: notice.origin,
        pages: pagePathsUnder(notice.accountPagesPath),
        now: at,
        values: { providerName: notice.names(provider) },
      });
    return 'removed';
  });
}
