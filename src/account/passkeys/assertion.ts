import { attempt, type AttemptPorts } from '../../auth/signin/password-proof.js';
import type { PasskeyAssertion, PasskeyVerdict } from './passkey-port.js';
import { challengeDigest, challengeTtlSeconds, openChallenge } from './webauthn-challenge.js';
import type { UserStore } from '../../users/store.js';
import { secondFactorsOf, type Factor, type SecondFactors } from '../second-factors.js';
import { parseResponse, relyingPartyOf, verifyAssertion } from './ceremony.js';
import type { PasskeyStore } from './passkey-store.js';

export interface AssertionPorts extends Pick<AttemptPorts, 'throttle' | 'now'> {
  log: NonNullable<AttemptPorts['log']>;
  passkeys: PasskeyStore;
  users: Pick<UserStore, 'findById'>;
  secrets: readonly string[];
  /** The registered factors, asked whether the account has a second factor. */
  factors: readonly Factor[];
  /** SECOND_FACTOR=required: without user verification an account with no other factor enrols. */
  secondFactorRequired?: boolean;
}

/** What the session records of a passkey sign-in. */
export const passkeyProofs = (userVerified: boolean): string[] =>
  userVerified ? ['passkey', 'user_verification'] : ['passkey'];

/**
 * Whether the account has a factor a password sign-in must be followed by (TOTP, recovery
 * codes). Passkeys are not one: they sign in on their own.
 */
const hasSecondFactor = (factors: SecondFactors) => factors.totp || factors.recoveryCodes > 0;

/**
 * A passkey sign-in's check, as one throttled attempt (charged to the client's address and to the
 * credential it names, as a password is to the address and the account; a right assertion takes
 * its failure charges back): the challenge is the cookie's, unexpired and never answered
 * before; the credential is registered (a removed one is unknown); the signature verifies with
 * a counter that moved on; the account is enabled. With user verification the sign-in proves
 * both factors; without it, what a password proves, so an account with a second factor gets
 * `second_factor_required` and no session.
 */
export async function checkAssertion(
  ports: AssertionPorts,
  input: PasskeyAssertion,
): Promise<PasskeyVerdict> {
  const response = parseResponse(input.data);
  const scope = {
    email: `passkey:${response?.id ?? ''}`,
    ip: input.ip,
    knownDevice: false,
  };
  const attemptPorts = { throttle: ports.throttle, now: ports.now, log: ports.log };
  const result = await attempt(attemptPorts, scope, async () => {
    const wrong = (reason: string, userId?: string) => ({
      right: false as const,
      seen: { reason, ...(userId !== undefined && { userId }) },
    });
    if (response === null) return wrong('malformed');
    const challenge = await openChallenge(ports.secrets, input.secure, input.challengeCookie);
    if (challenge === null || challenge.registerData !== undefined) return wrong('no_challenge');
    const expiresAt = ports.now() + challengeTtlSeconds * 1000;
    if (!(await ports.passkeys.spendChallenge(challengeDigest(challenge.challenge), expiresAt))) {
      return wrong('challenge_used');
    }
    const passkey = await ports.passkeys.findByCredentialId(response.id);
    if (passkey === null) return wrong('unknown_passkey');
    const rp = relyingPartyOf(input.origin);
    const verified = await verifyAssertion(rp, response.value, challenge.challenge, passkey);
    if (verified === null) return wrong('bad_assertion', passkey.userId);
    // Two assertions checked at once against one counter: only one moves it on.
    const at = ports.now();
    if (!(await ports.passkeys.used(passkey.id, passkey.counter, verified.newCounter, at))) {
      return wrong('counter_raced', passkey.userId);
    }
    const user = await ports.users.findById(passkey.userId);
    if (user === null || user.disabled) return wrong('disabled', passkey.userId);
    return { right: true as const, value: { user, userVerified: verified.userVerified } };
  });
  if ('throttled' in result) {
    return { outcome: 'throttled', retryAfterSeconds: result.retryAfterSeconds };
  }
  if (!result.right) return { outcome: 'wrong', ...result.seen };
  const { user, userVerified } = result.value;
  if (!userVerified) {
    const has = hasSecondFactor(await secondFactorsOf(ports.factors, user.id));
    // Required and nothing else proves a second factor: this passkey proved possession alone
    // (a security key without its PIN proves no more), so it signs in only after the password,
    // with the challenge that left (./passkey-authorize.ts); alone it enrols nothing.
    const code = has
      ? 'second_factor_required'
      : ports.secondFactorRequired === true
        ? 'passkey_unverified'
        : undefined;
    if (code !== undefined)
      return {
        outcome: 'refused',
        code,
        userId: user.id,
        credentialVersion: user.credentialVersion,
      };
  }
  return {
    outcome: 'right',
    user: {
      id: user.id,
      email: user.email,
      name: user.name,
      credentialVersion: user.credentialVersion,
    },
    proofs: passkeyProofs(userVerified),
  };
}
