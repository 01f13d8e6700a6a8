import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { displayName } from '../display-name.js';
import { fieldsOf } from '../request-body.js';

const fields = z.object({ name: displayName });

/** `POST /api/account/profile` {name}: renames; sessions stay. */
export const updateProfile: AccountAction = async (deps, { signedIn, body }) => {
  const { name } = fieldsOf(fields, body);
  await deps.users.rename(signedIn.user.id, name);
  const user = await deps.store.view(signedIn.user.id);
  if (user === null) throw new HttpError('unauthenticated');
  return answer({ user });
};
