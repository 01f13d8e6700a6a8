import { WebAuthnVerificationError } from '@auth/core/errors';
import {
  RateLimited,
  SignInCheckRefused,
  type SignedInUser,
  type SignInChallenges,
} from './authorize.js';
import type { PasskeyPort } from './passkey-port.js';
import { fromStore, interrupt, type AuthRequestContext } from './request-context.js';

export interface PasskeyAuthorizeDeps {
  passkeys: Pick<PasskeyPort, 'assert'>;
  /** The second step's challenges: an enrolment refusal leaves one, as a password's does. */
  challenges?: Pick<SignInChallenges, 'issue'> | undefined;
  log: { info(fields: object, message: string): void };
}

/**
 * The credentials provider's check for a passkey sign-in: the assertion in the posted `data`
 * instead of a password. A right one is signed in exactly as a right password is (the jwt
 * callback issues the session, recording what the assertion proved); a wrong one answers as
 * Auth.js's Passkey provider does (`error=WebAuthnVerificationError`), one without user
 * verification on an account with a second factor `code=second_factor_required`.
 */
export function createPasskeyAuthorize(deps: PasskeyAuthorizeDeps) {
  return async function passkeyAuthorize(
    credentials: Partial<Record<string, unknown>>,
    context: AuthRequestContext,
  ): Promise<SignedInUser | null> {
    const passkey = context.passkey;
    if (passkey === undefined) throw new Error('a passkey check ran for a password sign-in');
    const clientIp = context.clientIp;
    const verdict = await fromStore(context, () =>
      deps.passkeys.assert({
        data: credentials.data,
        challengeCookie: passkey.challengeCookie,
        origin: context.origin,
        secure: passkey.secure,
        ip: clientIp,
      }),
    );
    switch (verdict.outcome) {
      case 'throttled':
        interrupt(context, { kind: 'throttled', retryAfterSeconds: verdict.retryAfterSeconds });
        deps.log.info({ reason: 'throttled', method: 'passkey', clientIp }, 'sign-in refused');
        throw new RateLimited();
      case 'wrong':
      case 'refused': {
        const reason = verdict.outcome === 'wrong' ? verdict.reason : verdict.code;
        const userId = verdict.userId;
        deps.log.info({ reason, method: 'passkey', clientIp, userId }, 'sign-in refused');
        context.signInResult = 'invalid';
        if (userId !== undefined) {
          context.accountEvent = {
            type: 'signin_failed',
            userId,
            detail: { reason, method: 'passkey' },
          };
        }
        if (verdict.outcome === 'refused') {
          const challenges = deps.challenges;
          if (verdict.code === 'second_factor_enrolment_required' && challenges !== undefined) {
            const user = { id: verdict.userId, credentialVersion: verdict.credentialVersion };
            context.issuedChallenge = await fromStore(context, () => challenges.issue(user));
          }
          throw new SignInCheckRefused(verdict.code);
        }
        throw new WebAuthnVerificationError();
      }
      case 'right': {
        const { user, proofs } = verdict;
        deps.log.info({ userId: user.id, clientIp, method: 'passkey' }, 'signed in');
        context.signInResult = 'success';
        context.verifiedCredential = {
          userId: user.id,
          credentialVersion: user.credentialVersion,
          proofs,
        };
        return { id: user.id, email: user.email, name: user.name };
      }
    }
  };
}
