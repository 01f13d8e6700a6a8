import type { SignInVerdict } from '../../auth/signin/sign-in-check.js';
import type { AccountWayIn } from '../second-factors.js';
import type { SecondStep } from './second-step.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { factorSummary } from './totp-store.js';

/** What the sign-in challenge after `second_factor_required` is issued for: the code step. */
export const secondStepPurpose = 'second_step';

/**
 * TOTP with its recovery codes, as a way in: its part of `secondFactors`, its check after the
 * password, and the sign-in challenge its `second_factor_required` opens (the next post sends
 * only the code). It runs whatever SECOND_FACTOR says: an account that enrolled always needs
 * its factor (turning factors off never lowers an account's assurance).
 */
export function createTotpWayIn(deps: {
  db: Kysely<Database>;
  secondStep: SecondStep;
}): AccountWayIn {
  return {
    factor: {
      name: 'totp',
      async summary(userId) {
        const { totp, recoveryCodes } = await factorSummary(deps.db, userId);
        return { totp, recoveryCodes };
      },
    },
    wayIn: {
      id: 'totp',
      challengeOpenedBy: { second_factor_required: secondStepPurpose },
      signInChecks: [
        {
          name: 'totp',
          async check(user, attempt): Promise<SignInVerdict> {
            const result = await deps.secondStep.prove(user, attempt.credentials, attempt);
            switch (result.outcome) {
              case 'none':
                return { ok: true };
              case 'right':
                return { ok: true, proof: result.proof };
              case 'missing':
                return { ok: false, code: 'second_factor_required' };
              case 'wrong':
                return { ok: false, code: 'second_factor_invalid', wrong: true };
              case 'throttled':
                return {
                  ok: false,
                  code: 'rate_limited',
                  retryAfterSeconds: result.retryAfterSeconds,
                };
            }
          },
        },
      ],
    },
  };
}
