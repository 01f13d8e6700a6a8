import { Secret, TOTP } from 'otpauth';
import { renderSVG } from 'uqr';

/*
 * RFC 6238 as authenticator apps know it: HMAC-SHA-1, 6 digits, 30-second steps, and the step
 * before and after the current one accepted for clock drift. Which step a code matched is what
 * sign-in records (src/account/totp/totp-store.ts), so no step is accepted twice.
 */

export const totpDigits = 6;
export const totpPeriodSeconds = 30;
/** Steps accepted either side of the current one. */
export const totpWindowSteps = 1;
/** 160 bits, as RFC 4226 recommends for the shared secret. */
const secretBytes = 20;

/** A new shared secret, in the base32 an app takes when typed. */
export function newTotpSecret(): string {
  return new Secret({ size: secretBytes }).base32;
}

/** What an authenticator app scans: the `otpauth://` URI and its QR code as SVG. */
export function enrolmentOf(secret: string, issuer: string, account: string) {
  const uri = new TOTP({
    issuer,
    label: account,
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: totpDigits,
    period: totpPeriodSeconds,
  }).toString();
  // Dark modules on white whatever the page's theme: scanners expect dark on light.
  const qrSvg = renderSVG(uri, { border: 2, pixelSize: 6, ecc: 'M' });
  return { uri, qrSvg };
}

/** Only six digits (spaces a person typed between them dropped); anything else is no code. */
export function readTotpCode(typed: unknown): string | null {
  if (typeof typed !== 'string' || typed.length > 16) return null;
  const code = typed.replace(/[\s-]/g, '');
  return /^[0-9]{6}$/.test(code) ? code : null;
}

/**
 * The time step `code` is right for, within ±1 step of `nowMs`, or null. The caller still has
 * to claim the step (it may have been used).
 */
export function matchingStep(secret: string, code: string, nowMs: number): number | null {
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: totpDigits,
    period: totpPeriodSeconds,
    timestamp: nowMs,
    window: totpWindowSteps,
  });
  if (delta === null) return null;
  return Math.floor(nowMs / 1000 / totpPeriodSeconds) + delta;
}
