import { invalidField } from '../../http/errors.js';
import type { AccountAction } from '../action.js';
import { changeEmail } from '../email/change-email.js';
import { reauthenticate } from './reauthenticate.js';

/**
 * The page's address change: the current password proves the sign-in recent (as the
 * re-authentication route does, throttled as a sign-in), then the JSON route's own action.
 */
export const changeEmailWithPassword: AccountAction = async (deps, input) => {
  const password = input.body.currentPassword;
  if (typeof password !== 'string' || password === '') throw invalidField('currentPassword');
  await reauthenticate(deps, { ...input, body: { password } });
  return changeEmail(deps, input);
};
