import { HttpError } from '../../http/errors.js';
import type { User } from '../../users/store.js';
import type { Client } from '../action.js';
import { rateLimited } from '../attempts.js';
import type { SecondFactorProof, SecondStep } from './second-step.js';

/**
 * A route that asks for the password asks an account with a second factor for it too
 * (re-authentication, a password reset): `otp` or `recoveryCode` beside the password. None:
 * 401 `second_factor_required`; wrong or used: 403 `second_factor_invalid`; past a limit, 429.
 * Null when the account has no second factor.
 */
export async function requireSecondFactor(
  secondStep: SecondStep,
  user: User,
  body: Record<string, unknown>,
  client: Client & { knownDevice: boolean },
): Promise<SecondFactorProof | null> {
  const result = await secondStep.prove(
    user,
    { otp: body.otp, recoveryCode: body.recoveryCode },
    client,
  );
  switch (result.outcome) {
    case 'none':
      return null;
    case 'right':
      return result.proof;
    case 'missing':
      throw new HttpError('second_factor_required', {}, undefined, { field: 'otp' });
    case 'wrong':
      throw new HttpError('second_factor_invalid', {}, undefined, {
        field: typeof body.otp === 'string' && body.otp !== '' ? 'otp' : 'recoveryCode',
      });
    case 'throttled':
      throw rateLimited(result.retryAfterSeconds);
  }
}
