import { createHash } from 'node:crypto';
import { Secret } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/account/totp/secret-box.js';
import { enrolmentSecret } from '../../src/account/totp/signin-enrolment.js';
import { matchingStep } from '../../src/account/totp/totp-code.js';
import { readRecoveryCode } from '../../src/account/totp/recovery-codes.js';
import { parseConfig } from '../../src/config/index.js';

// RFC 6238 Appendix B: the SHA-1 seed is the ASCII "12345678901234567890" (base32 below); six
// digits are the last six of the eight the appendix lists.
const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const vectors = [
  [59, '94287082', 1],
  [1_111_111_109, '07081804', 37_037_036],
  [1_111_111_111, '14050471', 37_037_037],
  [1_234_567_890, '89005924', 41_152_263],
  [2_000_000_000, '69279037', 66_666_666],
  [20_000_000_000, '65353130', 666_666_666],
] as const;

describe('TOTP codes (RFC 6238, SHA-1, 6 digits, 30 s, ±1 step)', () => {
  it.each(vectors)('at %i s the code ends %s and is step %i', (seconds, eight, step) => {
    const code = eight.slice(2);
    expect(matchingStep(seed, code, seconds * 1000)).toBe(step);
    // One step either side still matches it (clock drift); two steps do not.
    expect(matchingStep(seed, code, (seconds + 30) * 1000)).toBe(step);
    expect(matchingStep(seed, code, (seconds - 30) * 1000)).toBe(step);
    expect(matchingStep(seed, code, (seconds + 90) * 1000)).toBeNull();
  });
});

describe('the sealed TOTP secret', () => {
  const key = 'a'.repeat(20) + 'bcdefghijklmnopqrstuvwxyz0123456789';
  const next = 'Q7m2Xv9Lp4Tz8Rk1Hs6Wd3Bn5Fj0Gc2Ya8Ue4Io';

  it('opens for its user only, and under a rotated key list while the old key is listed', () => {
    const sealed = createSecretBox([key]).seal('user-1', 'JBSWY3DPEHPK3PXP');
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(createSecretBox([key]).open('user-1', sealed)).toBe('JBSWY3DPEHPK3PXP');
    expect(createSecretBox([key]).open('user-2', sealed)).toBeNull();
    expect(createSecretBox([next, key]).open('user-1', sealed)).toBe('JBSWY3DPEHPK3PXP');
    expect(createSecretBox([next]).open('user-1', sealed)).toBeNull();
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(createSecretBox([key]).open('user-1', tampered)).toBeNull();
  });

  it('derives the enrolment key at sign-in from the challenge under FACTOR_KEY, not from the challenge alone', () => {
    const challenge = 'x'.repeat(43);
    const digest = createHash('sha256')
      .update(`gatehouse sign-in enrolment key\0${challenge}`)
      .digest();
    const plain = new Secret({ buffer: new Uint8Array(digest.subarray(0, 20)).buffer }).base32;
    const mine = enrolmentSecret(createSecretBox([key]), challenge);
    expect(mine).toMatch(/^[A-Z2-7]{32}$/);
    expect(mine).not.toBe(plain);
    expect(enrolmentSecret(createSecretBox([key]), challenge)).toBe(mine);
    expect(enrolmentSecret(createSecretBox([next]), challenge)).not.toBe(mine);
    // In development without FACTOR_KEY: the key the factor code already seals with.
    expect(enrolmentSecret(createSecretBox([], next), challenge)).not.toBe(plain);
  });

  it('reads recovery codes in any case, with or without dashes, and nothing else', () => {
    expect(readRecoveryCode('ABCD-EFGH-JKMN-PQRS')).toBe('abcdefghjkmnpqrs');
    expect(readRecoveryCode('abcd efgh jkmn pqr')).toBeNull();
    expect(readRecoveryCode('abcd-efgh-jkmn-pqr!')).toBeNull();
  });
});

describe('SECOND_FACTOR and FACTOR_KEY', () => {
  const production = {
    NODE_ENV: 'production',
    AUTH_URL: 'https://auth.example',
    AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
  };
  const modeOf = (env: Record<string, string>) => {
    const result = parseConfig(env);
    return result.ok ? result.config.secondFactor.mode : result.problems;
  };

  it('are optional in development, off in production without a key, optional with one', () => {
    expect(modeOf({})).toBe('optional');
    expect(modeOf(production)).toBe('off');
    expect(
      modeOf({ ...production, FACTOR_KEY: 'k3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt' }),
    ).toBe('optional');
  });

  it('production asked for second factors without a key refuses to start, naming FACTOR_KEY', () => {
    expect(modeOf({ ...production, SECOND_FACTOR: 'optional' })).toEqual([
      'FACTOR_KEY: is required in production with SECOND_FACTOR=optional (at least 32 bytes, not AUTH_SECRET; generate one with: openssl rand -base64 33)',
    ]);
    expect(modeOf({ ...production, SECOND_FACTOR: 'required' })).toEqual([
      'FACTOR_KEY: is required in production with SECOND_FACTOR=required (at least 32 bytes, not AUTH_SECRET; generate one with: openssl rand -base64 33)',
    ]);
    expect(
      modeOf({
        ...production,
        SECOND_FACTOR: 'required',
        FACTOR_KEY: 'k3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
      }),
    ).toBe('required');
    expect(modeOf({ SECOND_FACTOR: 'always' })).toEqual([
      expect.stringMatching(/^SECOND_FACTOR: must be one of off, optional, required/),
    ]);
    expect(modeOf({ FACTOR_KEY: 'short' })).toEqual([
      'FACTOR_KEY: each comma-separated key must be at least 32 bytes; generate one with: openssl rand -base64 33',
    ]);
  });
});
