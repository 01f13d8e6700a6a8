import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction, type AccountDeps } from '../action.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { displayName } from '../display-name.js';
import { removePasskey } from './enrolment.js';
import { createPasskeyStore } from './passkey-store.js';
import { secondFactorsOf } from '../factors.js';

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

/** SECOND_FACTOR=required: no TOTP, and this is the one passkey left. */
async function isLastFactor(deps: AccountDeps, userId: string): Promise<boolean> {
  const factors = await secondFactorsOf(deps.factors, userId);
  return !factors.totp && factors.passkeys <= 1;
}

/** `POST /api/account/passkeys/{id}/remove`: gone at once; its next assertion is refused. */
export const deletePasskey: AccountAction = async (deps, { signedIn, body, client }) => {
  const { id } = fieldsOf(removeFields, body);
  if (deps.totp?.mode === 'required' && (await isLastFactor(deps, signedIn.user.id)))
    throw new HttpError('last_second_factor');
  if (!(await removePasskey(portsOf(deps), signedIn.user, id, client))) throw noSuchPasskey();
  return answer({ status: 'removed' });
};
