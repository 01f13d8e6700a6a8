import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { recordFactorChange } from './factor-change.js';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes.js';
import { readTotp, replaceRecoveryCodes } from './totp-store.js';

/**
 * `POST /api/account/recovery-codes` (recent): 10 new recovery codes, shown this once; the old
 * set is void. Only with TOTP on (400 `invalid_code` otherwise: there is nothing they recover).
 */
export const regenerateRecoveryCodes: AccountAction = async (deps, { signedIn, client }) => {
  if (deps.totp === undefined) throw new HttpError('not_found');
  const { user } = signedIn;
  const fresh = newRecoveryCodes();
  const now = deps.now();
  const done = await deps.db.transaction().execute(async (trx) => {
    const row = await readTotp(trx, user.id);
    if (row === null || row.secret === null) return false;
    const hashes = fresh.map((code) => recoveryCodeHash(user.id, code));
    await replaceRecoveryCodes(trx, user.id, hashes, now);
    await recordFactorChange(trx, {
      user,
      type: null,
      client,
      mail: deps.mail,
      now,
      says: `New recovery codes were made for your account; the old ones no longer work.`,
      recoveryCodesLeft: fresh.length,
    });
    return true;
  });
  if (!done)
    throw new HttpError('invalid_code', {}, 'Turn on two-step sign-in first.', {
      reason: 'no_totp',
    });
  return answer({ recoveryCodes: fresh });
};
