import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { fieldsOf } from '../request-body.js';
import { recordFactorChange } from './factor-change.js';
import { secondFactorsOf } from '../second-factors.js';
import { invalidTotpProof, proveCurrentTotp, totpProofFields } from './second-factor-proof.js';
import { removeTotp } from './totp-store.js';
import { lockFactors, lockedFactors, voidChallenges } from '../model/factor-lock.js';

const fields = z.object(totpProofFields);

/**
 * `POST /api/account/totp/disable` (recent) {code | recoveryCode}: a right code (checked once,
 * charged as sign-in charges it) turns TOTP off and voids the recovery codes. No TOTP, or a
 * wrong or missing code: 400 `invalid_code`.
 */
export const disableTotp: AccountAction = async (deps, { signedIn, body, client }) => {
  const totp = deps.totp;
  if (totp === undefined) throw new HttpError('not_found');
  const input = fieldsOf(fields, body);
  const { user } = signedIn;
  // Before the code is checked (and spent): it would change nothing. TOTP that is not on is
  // refused as ever, by the code check below (400).
  const required = totp.mode === 'required';
  if (required) {
    const factors = await secondFactorsOf(deps.factors, user.id);
    if (factors.totp && factors.passkeys === 0) throw new HttpError('last_second_factor');
  }
  if ((await proveCurrentTotp(totp.secondStep, user, input, client)) === 'none')
    throw invalidTotpProof(input);
  const now = deps.now();
  const kept = await deps.db.transaction().execute(async (trx) => {
    // Checked again under the account's lock: a passkey removed meanwhile may have been the
    // other factor.
    await lockFactors(trx, user.id);
    if (required && (await lockedFactors(trx, user.id)).passkeys === 0) return true;
    if (!(await removeTotp(trx, user.id, now))) return false;
    await voidChallenges(trx, user.id, now);
    await recordFactorChange(trx, {
      user,
      type: 'totp_disabled',
      client,
      mail: deps.mail,
      now,
      says: `Two-step sign-in was turned off for your account: a password alone now signs in.`,
    });
    return false;
  });
  if (kept) throw new HttpError('last_second_factor');
  return answer({ status: 'totp_disabled' });
};
