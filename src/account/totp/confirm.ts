import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { attempt, right, wrong } from '../attempts.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { voidChallenges } from '../model/factor-lock.js';
import { recordFactorChange } from './factor-change.js';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes.js';
import type { SecretBox } from './secret-box.js';
import { matchingStep, readTotpCode } from './totp-code.js';
import { activatePending, readTotp, replaceRecoveryCodes, type TotpRow } from './totp-store.js';

const fields = z.object({ code: boundedString(64) });

/**
 * What is pending: the secret in clear and the active one it replaces (null for a first
 * set-up). Null when nothing is pending, or when TOTP is on and the pending box is not the
 * successor of the active secret (a set-up that did not prove it: ./setup.ts).
 */
function pendingOf(box: SecretBox, userId: string, row: TotpRow | null) {
  if (row === null || row.pending === null) return null;
  const replacing = row.secret;
  const secret = box.open(userId, row.pending, replacing ?? undefined);
  return secret === null ? null : { pending: row.pending, replacing, secret };
}

/** TOTP is on and the pending box opens as a first set-up's: made without the proof. */
const unproven = (box: SecretBox, userId: string, row: TotpRow | null) =>
  row !== null &&
  row.secret !== null &&
  row.pending !== null &&
  box.open(userId, row.pending) !== null;

/** 400 `invalid_code` for a pending replacement that was set up without the proof. */
const unprovenReplacement = () =>
  new HttpError(
    'invalid_code',
    {},
    'Start the move to a new app again: it asks for a code of your current app (or a recovery code) first.',
    { field: 'code', reason: 'replacement_unproven' },
  );

/**
 * `POST /api/account/totp/confirm` (recent) {code}: a right code of the pending secret turns it
 * on, with its time step as the first one accepted (so the confirming code cannot sign in
 * after), and answers 10 new recovery codes, shown this once. Charged to the sign-in throttle
 * as every code is; wrong, or nothing pending: 400 `invalid_code`. With TOTP on, only a set-up
 * that proved the current app replaces it; any other pending set-up is refused (400
 * `invalid_code`, reason `replacement_unproven`) before its code is checked.
 */
export const confirmTotp: AccountAction = async (deps, { signedIn, body, client }) => {
  const totp = deps.totp;
  if (totp === undefined) throw new HttpError('not_found');
  const { code: typed } = fieldsOf(fields, body);
  const { user } = signedIn;
  const row = await readTotp(deps.db, user.id);
  const pending = pendingOf(totp.box, user.id, row);
  // Said as such (one made before replacing asked for the proof, or while TOTP was off):
  // no code is checked, so nothing is charged.
  if (pending === null && unproven(totp.box, user.id, row)) throw unprovenReplacement();
  const scope = { email: user.email, ip: client.ip, knownDevice: true };
  const codes = await attempt(deps.throttle, deps.now(), scope, async () => {
    const code = readTotpCode(typed);
    const now = deps.now();
    const step = pending === null || code === null ? null : matchingStep(pending.secret, code, now);
    if (pending === null || step === null) return wrong;
    const fresh = newRecoveryCodes();
    const checked = {
      pending: pending.pending,
      replacing: pending.replacing,
      sealed: pending.replacing === null ? pending.pending : totp.box.seal(user.id, pending.secret),
      step,
    };
    const done = await deps.db.transaction().execute(async (trx) => {
      if (!(await activatePending(trx, user.id, checked, now))) return false;
      await voidChallenges(trx, user.id, now);
      const hashes = fresh.map((one) => recoveryCodeHash(user.id, one));
      await replaceRecoveryCodes(trx, user.id, hashes, now);
      await recordFactorChange(trx, {
        user,
        type: 'totp_enabled',
        client,
        mail: deps.mail,
        now,
        says:
          pending.replacing !== null
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
