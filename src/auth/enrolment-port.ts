/*
 * What the auth wing asks of enrolment at sign-in (the account wing implements it:
 * src/account/totp/enrolment.ts). With SECOND_FACTOR=required a right password of an account
 * without a second factor is answered `second_factor_enrolment_required` and a second-step
 * challenge; the sign-in page (and `GET /api/auth/enrolment`) show, for that challenge, the
 * authenticator app's key to enrol, and the next sign-in post with the challenge and a code of
 * it turns TOTP on and signs in.
 */

/** What an authenticator app is set up with: the key, its `otpauth://` URI and QR code (SVG). */
export interface EnrolmentKey {
  secret: string;
  uri: string;
  qrSvg: string;
}

export interface EnrolmentPort {
  /**
   * The key the challenge's account enrols, or null when the challenge is not live or its
   * account needs no enrolment (it has a factor, or factors are not required).
   */
  keyFor(challenge: string): Promise<EnrolmentKey | null>;
}
