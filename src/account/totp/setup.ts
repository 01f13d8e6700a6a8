import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { enrolmentOf, newTotpSecret } from './totp-code.js';
import { savePending } from './totp-store.js';

/**
 * `POST /api/account/totp/setup` (recent): a new secret, pending until a code of it is
 * confirmed; an active TOTP stays in use meanwhile (moving to a new phone). The secret is kept
 * sealed; the answer is the only place it is seen in clear.
 */
export const setupTotp: AccountAction = async (deps, { signedIn }) => {
  const totp = deps.totp;
  if (totp === undefined) throw new HttpError('not_found');
  const { user } = signedIn;
  const secret = newTotpSecret();
  await savePending(deps.db, user.id, totp.box.seal(user.id, secret), deps.now());
  return answer({ secret, ...enrolmentOf(secret, totp.issuer, user.email) });
};
