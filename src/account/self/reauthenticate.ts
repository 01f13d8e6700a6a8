import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { passwordRawMaxLength } from '../../users/password.js';
import type { User } from '../../users/store.js';
import { answer, type AccountAction, type AccountDeps, type Client } from '../action.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { requireSecondFactor } from '../totp/second-factor-proof.js';

/**
 * The signed-in person's password, checked and throttled as a sign-in's (from a device that
 * signed in before, its own limits); a failure recorded with `action` (what it was for).
 */
export async function proveAsSignIn(
  deps: AccountDeps,
  { client, user }: { client: Client; user: User },
  password: string,
  action: 'reauthenticate' | 'password_change',
): Promise<void> {
  await deps.provePassword(
    user,
    password,
    client.ip,
    (failure) => {
      void deps.record({
        ...client,
        userId: user.id,
        type: failure === 'throttled' ? 'throttled' : 'signin_failed',
        detail: { reason: failure, action },
      });
    },
    { deviceCookie: client.deviceCookie },
  );
}

const fields = z.object({ password: boundedString(passwordRawMaxLength) });

/**
 * `POST /api/account/reauthenticate` {password, otp? | recoveryCode?}: an account with a second
 * factor proves it too (src/account/totp/second-factor-proof.ts); the session's proof is now,
 * so (recent) routes accept it for REAUTH_MAX_AGE. Checked and throttled as a sign-in; never
 * creates a session.
 */
export const reauthenticate: AccountAction = async (deps, { client, signedIn, body }) => {
  const { password } = fieldsOf(fields, body);
  const { user, session } = signedIn;
  await proveAsSignIn(deps, { client, user }, password, 'reauthenticate');
  // The code's guesses pass a per-email lock only from a device that signed in before (as the
  // password's do): a session is not a device.
  await requireSecondFactor(deps.secondStep, user, body, {
    ...client,
    knownDevice: deps.provePassword.knownDevice(user, client.deviceCookie),
  });
  if (!(await deps.store.reauthenticated(session.claims.sid, deps.now()))) {
    throw new HttpError('unauthenticated');
  }
  return answer({ status: 'reauthenticated' });
};
