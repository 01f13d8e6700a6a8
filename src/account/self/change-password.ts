import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { passwordRawMaxLength } from '../../users/password.js';
import { acceptableNewPassword, hashNewPassword } from '../model/chosen-password.js';
import type { AccountAction } from '../action.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { proveAsSignIn } from './reauthenticate.js';

const fields = z.object({
  currentPassword: boundedString(passwordRawMaxLength),
  newPassword: boundedString(passwordRawMaxLength),
});

/**
 * `POST /api/account/password/change` {currentPassword, newPassword}: the current password
 * checked and throttled as a sign-in (403, 429), the new one against the password policy
 * (422 `weak_password`), hashed with argon2id; every other session ends and this one goes on
 * under a new id (a copy of its old cookie ends with the others). When mail is on, the
 * "password changed" notice with its "this wasn't me" link is queued in the same transaction.
 */
export const changePassword: AccountAction = async (deps, { client, signedIn, body }) => {
  const { currentPassword, newPassword } = fieldsOf(fields, body);
  const { user, session } = signedIn;
  await proveAsSignIn(deps, { client, user }, currentPassword, 'password_change');
  const normalised = await acceptableNewPassword(newPassword, deps.passwordMinLength);
  const newHash = await hashNewPassword(deps.hasher, normalised);
  const { mail } = deps;
  const changed = await deps.store.changePassword({
    userId: user.id,
    sessionId: session.claims.sid,
    oldHash: user.passwordHash,
    newHash,
    at: deps.now(),
    event: client,
    ...(mail !== undefined && {
      notice: { mail, kind: 'password-changed-notice', origin: client.origin, pages: client.pages },
    }),
  });
  // The password or the session changed while this request ran: the other change stands.
  if (changed === null) throw new HttpError('invalid_credentials');
  return {
    body: { status: 'password_changed', endedSessions: changed.endedOthers },
    setCookie: await deps.sessions.cookieFor(session, changed.sessionId),
  };
};
