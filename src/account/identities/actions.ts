import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction, type AccountDeps, type AccountOperation } from '../action.js';
import { recentByIdOperation } from '../adapter.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { unlinkIdentity } from './identity-links.js';
import { identityAnswer, listIdentities } from './identity-store.js';

/*
 * `/api/account/identities`: the list (session) and unlink (recent). The id is the path's
 * `{id}` (or a form's `id` field on the account page); one of another person's identities is
 * 404, as one that does not exist. Linking starts at the provider (`signIn("github")` from a
 * recently signed-in browser, ./provider-sign-in.ts).
 */

const unlinkFields = z.object({ id: boundedString(64) });

/** The provider's name as the owner knows it: the configured label, else its id. */
export const providerNamesOf = (deps: Pick<AccountDeps, 'identityProviders'>) => (id: string) =>
  deps.identityProviders.find((setting) => setting.id === id)?.name ?? id;

/** `GET /api/account/identities`: `{identities: [{id, provider, email, linkedAt, lastUsedAt}]}`. */
export const listAccountIdentities: AccountAction = async (deps, { signedIn }) => {
  const identities = await listIdentities(deps.db, signedIn.user.id);
  return answer({ identities: identities.map(identityAnswer) });
};

/**
 * `POST /api/account/identities/{id}/unlink`: 204, the identity no longer signs in. 409
 * `last_sign_in_method` when the account would have no way in left (no password, no passkey,
 * no other identity), checked in the unlink's own transaction.
 */
export const unlinkAccountIdentity: AccountAction = async (deps, { signedIn, body, client }) => {
  const { id } = fieldsOf(unlinkFields, body);
  const ports = { db: deps.db, mail: deps.mail, pages: client.pages, now: deps.now };
  const outcome = await unlinkIdentity(
    { ...ports, names: providerNamesOf(deps) },
    signedIn.user,
    id,
    client,
  );
  if (outcome === 'missing') throw new HttpError('not_found', {}, 'No such identity.');
  if (outcome === 'last') throw new HttpError('last_sign_in_method');
  return { body: null, status: 204 };
};

/** Identities' rows of the account's operations table (src/account/account-operations.ts). */
export const identityOperations: readonly AccountOperation[] = [
  { path: '/identities', method: 'GET', guard: 'session', action: listAccountIdentities },
  recentByIdOperation('/identities/:id/unlink', unlinkAccountIdentity, {
    name: 'identity-unlink',
    path: '/identities/unlink',
  }),
];
