import { invalidField } from '../../http/errors.js';
import type { AccountAction, ActionInput, AccountDeps } from '../action.js';
import { confirmTotp } from './confirm.js';
import { disableTotp } from './disable.js';
import { regenerateRecoveryCodes } from './regenerate.js';
import { requireSecondFactor } from './second-factor-proof.js';
import { setupTotp } from './setup.js';
import { readTotpCode } from './totp-code.js';

/*
 * The `/account` page's TOTP forms: each asks for the current password in the form (as the
 * address change does), and for the app's code where the account has TOTP, then runs the JSON
 * route's own action. A proof here counts as a re-authentication, so the confirm form that
 * follows the set-up is within REAUTH_MAX_AGE.
 */

async function provePassword(deps: AccountDeps, input: ActionInput): Promise<void> {
  const password = input.body.currentPassword;
  if (typeof password !== 'string' || password === '') throw invalidField('currentPassword');
  const { user } = input.signedIn;
  await deps.provePassword(user, password, input.client.ip, (failure) => {
    void deps.record({
      ...input.client,
      userId: user.id,
      type: failure === 'throttled' ? 'throttled' : 'signin_failed',
      detail: { reason: failure, action: 'second_factor' },
    });
  });
}

/** The password, then the app's code if TOTP is on: the session is recent from now. */
async function reauthenticated(deps: AccountDeps, input: ActionInput): Promise<void> {
  await provePassword(deps, input);
  await requireSecondFactor(
    deps.secondStep,
    input.signedIn.user,
    { otp: input.body.code },
    { ...input.client, knownDevice: true },
  );
  await deps.store.reauthenticated(input.signedIn.session.claims.sid, deps.now());
}

/**
 * The password, then the set-up, which asks an account with TOTP for its app's code or a
 * recovery code (one field on the page: a code that is not six digits is taken as a recovery
 * code) and checks it once; both proven, the session is recent from now.
 */
export const setupTotpWithPassword: AccountAction = async (deps, input) => {
  await provePassword(deps, input);
  const typed = input.body.code;
  const byRecovery = typeof typed === 'string' && typed !== '' && readTotpCode(typed) === null;
  const body = byRecovery ? { recoveryCode: typed } : { code: typed };
  const answered = await setupTotp(deps, { ...input, body });
  await deps.store.reauthenticated(input.signedIn.session.claims.sid, deps.now());
  return answered;
};

export { confirmTotp };

/** The code turns it off; it is checked once, by the action itself. */
export const disableTotpWithPassword: AccountAction = async (deps, input) => {
  await provePassword(deps, input);
  return disableTotp(deps, input);
};

export const regenerateWithPassword: AccountAction = async (deps, input) => {
  await reauthenticated(deps, input);
  return regenerateRecoveryCodes(deps, input);
};
