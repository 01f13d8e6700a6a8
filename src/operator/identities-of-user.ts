import {
  deleteIdentity,
  listIdentities,
  type Identity,
} from '../account/identities/identity-store.js';
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

/**
 * Removes one identity of the user (it no longer signs in), with `identity_unlinked`, the actor
 * and its webhook in one transaction; 'missing' when the user has no such identity. An
 * operator may remove the last way in: the account then signs in after a password reset.
 */
export function removeIdentityOfUser(
  ports: OperatorPorts,
  request: { userId: string; identityId: string; actor: Actor },
): Promise<'removed' | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const provider = await deleteIdentity(trx, request.userId, request.identityId, ports.now());
    if (provider === null) return 'missing';
    await recordOperatorEvent(trx, request.actor, request.userId, 'identity_unlinked', {
      identity: request.identityId,
      provider,
    });
    return 'removed';
  });
}
