import { HttpError } from '../../http/errors.js';
import type { AccountAction } from '../action.js';
import { deletePasskey } from '../passkeys/actions.js';
import { reauthenticate } from './reauthenticate.js';

/**
 * The account page's removal: a current password, when the form carried one, proves the
 * session recent first (as the re-authentication route does, throttled as a sign-in); then the
 * JSON route's (recent) guard and action.
 */
export const removePasskeyWithPassword: AccountAction = async (deps, input) => {
  const password = input.body.currentPassword;
  if (typeof password === 'string' && password !== '') {
    await reauthenticate(deps, { ...input, body: { password } });
  }
  const until = await deps.recentUntil(input.signedIn.session.claims.sid);
  if (until === null) throw new HttpError('unauthenticated');
  if (deps.now() >= until) throw new HttpError('reauthentication_required');
  return deletePasskey(deps, input);
};
