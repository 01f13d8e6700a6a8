import { afterPasswordParam } from '../../pages/retry-after.js';

/*
 * What the auth wing asks of enrolment at sign-in (the account wing implements it:
 * src/account/totp/signin-enrolment.ts). With SECOND_FACTOR=required a right password of an
 * account without a second factor is answered `second_factor_enrolment_required` and a
 * second-step challenge, and a code is mailed to the account's address (mail off:
 * `enrolment_code_required`, and an operator's enrolment code stands in for it); the sign-in
 * page (and `GET /api/auth/enrolment/totp`) show, for that challenge, the authenticator app's
 * key to enrol and where the code went, and the next sign-in post with the challenge, that code
 * (`emailCode`) and a code of the app turns TOTP on and signs in.
 */

/** What an authenticator app is set up with: the key, its `otpauth://` URI and QR code (SVG). */
export interface EnrolmentKey {
  secret: string;
  uri: string;
  qrSvg: string;
  /**
   * The address the code proving this enrolment was mailed to (the account's), or null when
   * mail is off and an operator's enrolment code is asked for instead.
   */
  codeSentTo: string | null;
}

export interface EnrolmentPort {
  /**
   * The key the challenge's account enrols, or null when the challenge is not live or its
   * account needs no enrolment (it has a factor, or factors are not required).
   */
  keyFor(challenge: string): Promise<EnrolmentKey | null>;
}

/**
 * The refusals after which the sign-in page is the enrolment step, while the browser's
 * challenge can still enrol: the first answer (mail on or off), and a refusal of either code.
 */
const enrolmentStepCodes: ReadonlySet<string> = new Set([
  'second_factor_enrolment_required',
  'enrolment_code_required',
  'second_factor_invalid',
  'email_code_required',
  'email_code_invalid',
]);

/** Whether the sign-in page with these query parameters is the enrolment step. */
export function isEnrolmentStep(params: URLSearchParams): boolean {
  if (params.get('error') !== 'CredentialsSignin') return false;
  const code = params.get('code') ?? '';
  // A second factor's lock pauses the enrolment's codes too: its step says so.
  const paused = code === 'rate_limited' && params.get(afterPasswordParam) === '1';
  return paused || enrolmentStepCodes.has(code);
}
