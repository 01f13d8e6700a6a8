import { invalidField } from '../../http/errors.js';
import type { AccountDeps, AccountOperation, ActionInput, TypedPassword } from '../action.js';
import { confirmTotp } from './confirm.js';
import { disableTotp } from './disable.js';
import { regenerateRecoveryCodes } from './regenerate.js';
import { requireSecondFactor } from './second-factor-proof.js';
import { setupTotp } from './setup.js';
import { readTotpCode } from './totp-code.js';

/*
 * TOTP's account operations: each JSON route, and its form on the `/account` page. Each form
 * but the confirm asks for the current password (as the address change does), and for the
 * app's code where the account has TOTP, then runs the JSON route's own action. A proof here
 * counts as a re-authentication, so the confirm form that follows the set-up is within
 * REAUTH_MAX_AGE.
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

/**
 * The password, then the set-up, which asks an account with TOTP for its app's code or a
 * recovery code (one field on the page: a code that is not six digits is taken as a recovery
 * code) and checks it once; both proven, the session is recent from now.
 */
const passwordForSetup: TypedPassword = async (deps, input, action) => {
  await provePassword(deps, input);
  const typed = input.body.code;
  const byRecovery = typeof typed === 'string' && typed !== '' && readTotpCode(typed) === null;
  const body = byRecovery ? { recoveryCode: typed } : { code: typed };
  const answered = await action(deps, { ...input, body });
  await deps.store.reauthenticated(input.signedIn.session.claims.sid, deps.now());
  return answered;
};

/** The password; the code turns it off, checked once, by the action itself. */
const passwordOnly: TypedPassword = async (deps, input, action) => {
  await provePassword(deps, input);
  return action(deps, input);
};

/** The password, then the app's code if TOTP is on: the session is recent from now. */
const passwordAndCode: TypedPassword = async (deps, input, action) => {
  await provePassword(deps, input);
  await requireSecondFactor(
    deps.secondStep,
    input.signedIn.user,
    { otp: input.body.code },
    { ...input.client, knownDevice: true },
  );
  await deps.store.reauthenticated(input.signedIn.session.claims.sid, deps.now());
  return action(deps, input);
};

const freshCodes = (answer: unknown) => ({
  secondFactor: { freshCodes: (answer as { recoveryCodes: string[] }).recoveryCodes },
});

/** TOTP's rows of the account's operations table (src/account/account-operations.ts). */
export const totpOperations: readonly AccountOperation[] = [
  {
    path: '/totp/setup',
    method: 'POST',
    guard: 'recent',
    action: setupTotp,
    needsFactors: true,
    form: {
      name: 'totp_setup',
      keep: [],
      typedPassword: passwordForSetup,
      shows: (answer) => ({
        secondFactor: { enrolment: answer as { secret: string; qrSvg: string } },
      }),
    },
  },
  {
    path: '/totp/confirm',
    method: 'POST',
    guard: 'recent',
    action: confirmTotp,
    needsFactors: true,
    form: { name: 'totp_confirm', keep: [], shows: freshCodes },
  },
  {
    path: '/totp/disable',
    method: 'POST',
    guard: 'recent',
    action: disableTotp,
    needsFactors: true,
    form: { name: 'totp_disable', keep: [], typedPassword: passwordOnly },
  },
  {
    path: '/recovery-codes',
    method: 'POST',
    guard: 'recent',
    action: regenerateRecoveryCodes,
    needsFactors: true,
    form: { name: 'recovery_codes', keep: [], typedPassword: passwordAndCode, shows: freshCodes },
  },
];
