import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { fieldsOf } from '../request-body.js';
import { proveCurrentTotp, totpProofFields } from './second-factor-proof.js';
import { enrolmentOf, newTotpSecret } from './totp-code.js';
import { readTotp, savePending } from './totp-store.js';

const fields = z.object(totpProofFields);

/**
 * `POST /api/account/totp/setup` (recent): a new secret, pending until a code of it is
 * confirmed; an active TOTP stays in use meanwhile (moving to a new phone). The secret is kept
 * sealed; the answer is the only place it is seen in clear.
 *
 * Replacing an active TOTP asks what turning it off asks, `code` of the current app or a
 * `recoveryCode` (400 `invalid_code` when missing or wrong, charged as every code is): the
 * password and a recent session are not enough to change the second factor. The pending secret
 * is then sealed as the successor of the secret just proved, and only such a box is confirmed
 * while TOTP is on (./confirm.ts): a set-up made without the proof, before this check existed
 * or while TOTP was off, never replaces it.
 */
export const setupTotp: AccountAction = async (deps, { signedIn, body, client }) => {
  const totp = deps.totp;
  if (totp === undefined) throw new HttpError('not_found');
  const proof = fieldsOf(fields, body);
  const { user } = signedIn;
  // Read before the proof: the box names the secret the proof was checked against, so a
  // secret changed meanwhile (another session's replacement) does not take this one over.
  const active = (await readTotp(deps.db, user.id))?.secret ?? null;
  const proved =
    active === null ? 'none' : await proveCurrentTotp(totp.secondStep, user, proof, client);
  const replacing = proved === 'right' && active !== null ? active : undefined;
  const secret = newTotpSecret();
  await savePending(deps.db, user.id, totp.box.seal(user.id, secret, replacing), deps.now());
  return answer({ secret, ...enrolmentOf(secret, totp.issuer, user.email) });
};
