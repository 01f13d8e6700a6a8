import type { SignInVerdict } from '../../auth/signin/authorize.js';
import type { Factor } from '../factor.js';
import type { SecondStep } from './second-step.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { factorSummary } from './totp-store.js';

/**
 * TOTP with its recovery codes, as a factor: its part of `secondFactors`, and its check after
 * the password. It runs whatever SECOND_FACTOR says: an account that enrolled always needs its
 * factor (turning factors off never lowers an account's assurance).
 */
export function createTotpFactor(deps: { db: Kysely<Database>; secondStep: SecondStep }): Factor {
  return {
    name: 'totp',
    async summary(userId) {
      const { totp, recoveryCodes } = await factorSummary(deps.db, userId);
      return { totp, recoveryCodes };
    },
    signInCheck: {
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
            return { ok: false, code: 'second_factor_invalid' };
          case 'throttled':
            return {
              ok: false,
              code: 'rate_limited',
              retryAfterSeconds: result.retryAfterSeconds,
            };
        }
      },
    },
  };
}
