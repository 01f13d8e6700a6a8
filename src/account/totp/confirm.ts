import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { attempt, right, wrong } from '../attempts.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { voidChallenges } from '../model/factor-lock.js';
import { recordFactorChange } from './factor-change.js';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes.js';
import { matchingStep, readTotpCode } from './totp-code.js';
import { activatePending, readTotp, replaceRecoveryCodes } from './totp-store.js';

const fields = z.object({ code: boundedString(64) });

/**
 * `POST /api/account/totp/confirm` (recent) {code}: a right code of the pending secret turns it
 * on, with its time step as the first one accepted (so the confirming code cannot sign in
 * after), and answers 10 new recovery codes, shown this once. Charged to the sign-in throttle
 * as every code is; wrong, or nothing pending: 400 `invalid_code`.
 */
export const confirmTotp: AccountAction = async (deps, { signedIn, body, client }) => {
  const totp = deps.totp;
  if (totp === undefined) throw new HttpError('not_found');
  const { code: typed } = fieldsOf(fields, body);
  const { user } = signedIn;
  const scope = { email: user.email, ip: client.ip, knownDevice: true };
  const codes = await attempt(deps.throttle, deps.now(), scope, async () => {
    const row = await readTotp(deps.db, user.id);
    const pending = row?.pending ?? null;
    const secret = pending === null ? null : totp.box.open(user.id, pending);
    const code = readTotpCode(typed);
    const now = deps.now();
    const step = secret === null || code === null ? null : matchingStep(secret, code, now);
    if (pending === null || step === null) return wrong;
    const fresh = newRecoveryCodes();
    const wasOn = row !== null && row.secret !== null;
    const done = await deps.db.transaction().execute(async (trx) => {
      if (!(await activatePending(trx, user.id, pending, step, now))) return false;
      await voidChallenges(trx, user.id, now);
      const hashes = fresh.map((one) => recoveryCodeHash(user.id, one));
      await replaceRecoveryCodes(trx, user.id, hashes, now);
      await recordFactorChange(trx, {
        user,
        type: 'totp_enabled',
        client,
        mail: deps.mail,
        now,
        says: wasOn
          ? `Two-step sign-in of your account was moved to a new authenticator app, and new recovery codes were made.`
          : `Two-step sign-in with an authenticator app was turned on for your account.`,
      });
      return true;
    });
    return done ? right(fresh) : wrong;
  });
  if (codes === null) throw new HttpError('invalid_code', {}, undefined, { field: 'code' });
  return answer({ recoveryCodes: codes });
};
