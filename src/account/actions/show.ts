import { HttpError } from '../../http/errors.js';
import type { AccountAction } from '../action.js';

/**
 * `GET /api/account`: the user, their second factors (none exist yet: later work), and, beyond
 * the spec's fields, until when this session may use (recent) routes without re-authenticating
 * (a page asks for the password before the form instead of after it).
 */
export const showAccount: AccountAction = async (deps, { signedIn }) => {
  const user = await deps.store.view(signedIn.user.id);
  const until = await deps.recentUntil(signedIn.session.claims.sid);
  if (user === null || until === null) throw new HttpError('unauthenticated');
  return {
    user,
    secondFactors: { totp: false, passkeys: 0, recoveryCodes: 0 },
    recentUntil: new Date(until).toISOString(),
  };
};
