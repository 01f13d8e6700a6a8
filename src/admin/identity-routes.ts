import {
  identityAnswer,
  listIdentitiesOfUser,
  removeIdentityOfUser,
} from '../operator/operations.js';
import { idParam, notFound, ok } from './admin-call.js';
import type { AdminHandler } from './admin-call.js';

/** `GET /users/{id}/identities`: the user's identities at providers, as `users identities`. */
export const userIdentities: AdminHandler = async (call) => {
  const identities = await listIdentitiesOfUser(call.ports, { userId: idParam(call, 'user') });
  if (identities === 'missing') throw notFound('user');
  return ok({ identities: identities.map(identityAnswer) });
};

/** `POST /users/{id}/identities/{identity}/remove`: 204, as `users remove-identity`. */
export const removeUserIdentity: AdminHandler = async (call) => {
  const identityId = call.params.identity ?? '';
  if (identityId === '' || identityId.length > 64) throw notFound('identity');
  const { ports } = call;
  // The owner is mailed, as for an unlink of their own, where mail is on and AUTH_URL is set.
  const notice =
    ports.mail?.enabled === true && ports.origin !== undefined
      ? {
          mail: ports.mail,
          origin: ports.origin,
          accountPagesPath: ports.accountPagesPath,
          names: ports.providerName ?? ((id: string) => id),
        }
      : undefined;
  const outcome = await removeIdentityOfUser(
    { ...ports, notice },
    {
      userId: idParam(call, 'user'),
      identityId,
      actor: call.actor,
    },
  );
  if (outcome === 'missing') throw notFound('identity');
  return { status: 204 };
};
