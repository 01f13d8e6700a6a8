import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction, type AccountDeps, type AccountOperation } from '../action.js';
import { recentByIdOperation } from '../adapter.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { displayName } from '../display-name.js';
import { removePasskey } from './enrolment.js';
import { createPasskeyStore } from './passkey-store.js';

/*
 * `/api/account/passkeys`: the list (session), rename (session) and remove (recent). The id is
 * the path's `{id}` (or a form's `id` field on the account page); one of another person's
 * passkeys is 404, as one that does not exist.
 */

const idField = { id: boundedString(64) };
const renameFields = z.object({ ...idField, name: displayName });
const removeFields = z.object(idField);

const noSuchPasskey = () => new HttpError('not_found', {}, 'No such passkey.');

const portsOf = (deps: AccountDeps) => ({
  db: deps.db,
  store: createPasskeyStore(deps.db),
  mail: deps.mail,
  now: deps.now,
});

/** `GET /api/account/passkeys`: `{passkeys: [{id, name, createdAt, lastUsedAt}]}`, oldest first. */
export const listPasskeys: AccountAction = async (deps, { signedIn }) =>
  answer({ passkeys: await createPasskeyStore(deps.db).list(signedIn.user.id) });

/** `POST /api/account/passkeys/{id}/rename` {name}. */
export const renamePasskey: AccountAction = async (deps, { signedIn, body }) => {
  const { id, name } = fieldsOf(renameFields, body);
  if (!(await createPasskeyStore(deps.db).rename(signedIn.user.id, id, name))) {
    throw noSuchPasskey();
  }
  return answer({ status: 'renamed' });
};

/**
 * `POST /api/account/passkeys/{id}/remove`: gone at once; its next assertion is refused. With
 * SECOND_FACTOR=required the account's last second factor stays (409 `last_second_factor`),
 * checked in the removal's own transaction; an id that is not one of the account's is 404.
 */
export const deletePasskey: AccountAction = async (deps, { signedIn, body, client }) => {
  const { id } = fieldsOf(removeFields, body);
  const keepLast = deps.totp?.mode === 'required';
  const outcome = await removePasskey(portsOf(deps), signedIn.user, id, client, keepLast);
  if (outcome === 'missing') throw noSuchPasskey();
  if (outcome === 'last') throw new HttpError('last_second_factor');
  // No password and no identity: this passkey is the only way in.
  if (outcome === 'last-way-in') throw new HttpError('last_sign_in_method');
  return answer({ status: 'removed' });
};

/**
 * Passkeys' rows of the account's operations table (src/account/account-operations.ts). The page's
 * forms name the passkey in an `id` field; its removal takes the current password when the
 * session is not recent.
 */
export const passkeyOperations: readonly AccountOperation[] = [
  { path: '/passkeys', method: 'GET', guard: 'session', action: listPasskeys },
  {
    path: '/passkeys/:id/rename',
    method: 'POST',
    guard: 'session',
    action: renamePasskey,
    form: { name: 'passkey-rename', path: '/passkeys/rename', keep: ['id', 'name'] },
  },
  recentByIdOperation('/passkeys/:id/remove', deletePasskey, {
    name: 'passkey-remove',
    path: '/passkeys/remove',
  }),
];
