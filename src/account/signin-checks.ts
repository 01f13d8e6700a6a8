import type { SignInCheck } from '../auth/signin/authorize.js';
import type { Factor } from './factors.js';
import { createVerifiedAddressCheck, type UnverifiedSignInDeps } from './verified-address-check.js';

export interface SignInCheckSettings {
  /** REQUIRE_VERIFIED_EMAIL. */
  requireVerifiedEmail: boolean;
  /** The registered second factors (src/account/factors.ts). */
  factors: readonly Factor[];
  /** SECOND_FACTOR=required: enrolment for an account without a factor, checked last. */
  enrolment?: SignInCheck | undefined;
}

/**
 * The account wing's checks after a right password, in the order sign-in runs them
 * (src/auth/signin/authorize.ts): the verified-address gate first, then each second factor as it is
 * registered. The one list a new way of proving who you are joins.
 */
export function createSignInChecks(
  settings: SignInCheckSettings,
  deps: UnverifiedSignInDeps,
): SignInCheck[] {
  return [
    ...(settings.requireVerifiedEmail ? [createVerifiedAddressCheck(deps)] : []),
    ...settings.factors.flatMap((factor) =>
      factor.signInCheck === undefined ? [] : [factor.signInCheck],
    ),
    ...(settings.enrolment === undefined ? [] : [settings.enrolment]),
  ];
}
