import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import type { User } from '../../users/store.js';
import type { Client } from '../action.js';
import { rateLimited } from '../attempts.js';
import { boundedString } from '../request-body.js';
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

/** What turning TOTP off (and replacing it) takes: a `code` of the app or a `recoveryCode`. */
export interface TotpProof {
  code?: string | undefined;
  recoveryCode?: string | undefined;
}

/** The fields of a `TotpProof` in a body. */
export const totpProofFields = {
  code: z.optional(boundedString(64)),
  recoveryCode: z.optional(boundedString(64)),
};

/** 400 `invalid_code`, naming the field the person used (the code unless only a recovery code). */
export const invalidTotpProof = (fields: TotpProof) =>
  new HttpError('invalid_code', {}, undefined, {
    field: fields.recoveryCode !== undefined && fields.code === undefined ? 'recoveryCode' : 'code',
  });

/**
 * The current TOTP proved as turning it off proves it (the one check of src/account/totp/
 * second-step.ts, charged as sign-in charges it): 'none' when the account has no TOTP to prove,
 * 'right' when the code or recovery code was right (and is now spent). Missing, wrong or used:
 * 400 `invalid_code`; past a limit, 429.
 */
export async function proveCurrentTotp(
  secondStep: SecondStep,
  user: User,
  fields: TotpProof,
  client: Client,
): Promise<'none' | 'right'> {
  const result = await secondStep.prove(
    user,
    { otp: fields.code, recoveryCode: fields.recoveryCode },
    { ...client, knownDevice: true },
  );
  if (result.outcome === 'throttled') throw rateLimited(result.retryAfterSeconds);
  if (result.outcome === 'none' || result.outcome === 'right') return result.outcome;
  throw invalidTotpProof(fields);
}
