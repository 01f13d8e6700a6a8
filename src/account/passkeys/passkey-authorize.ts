import { WebAuthnVerificationError } from '@auth/core/errors';
import {
  RateLimited,
  SignInCheckRefused,
  type SignedInUser,
} from '../../auth/signin/sign-in-check.js';
import {
  fromStore,
  interrupt,
  type AuthRequestContext,
} from '../../auth/request/request-context.js';
import type { SignInChallenges } from '../../challenge/challenges.js';
import type { PasskeyPort } from './passkey-port.js';

/** What the sign-in challenge a password leaves before a passkey is issued for. */
export const passkeyPurpose = 'passkey';

/** The browser's ceremony, as a passkey sign-in's post carried it. */
export interface PasskeyCeremony {
  /** Auth.js's challenge cookie (./webauthn-challenge.ts), as the request carried it. */
  challengeCookie: string | undefined;
  secure: boolean;
}

export interface PasskeyAuthorizeDeps {
  passkeys: Pick<PasskeyPort, 'assert'>;
  /**
   * The challenges a password leaves: after `passkey_required` one stands for the password
   * until a passkey without user verification follows (the two are two factors together).
   */
  challenges?: Pick<SignInChallenges, 'resume' | 'spend'> | undefined;
  log: { info(fields: object, message: string): void };
}

/**
 * The credentials provider's check for a passkey sign-in: the assertion in the posted `data`
 * instead of a password. A right one is signed in exactly as a right password is (the jwt
 * callback issues the session, recording what the assertion proved); a wrong one answers as
 * Auth.js's Passkey provider does (`error=WebAuthnVerificationError`), one without user
 * verification on an account with a second factor `code=second_factor_required`. With
 * SECOND_FACTOR=required, one without user verification on an account without TOTP signs in only
 * in a browser that holds the challenge a right password of that account left after
 * `passkey_required` (proofs `password passkey`); alone it is `code=passkey_unverified`.
 */
export function createPasskeyAuthorize(deps: PasskeyAuthorizeDeps) {
  /** The account a password proved in this browser for the passkey step, its challenge spent. */
  async function passwordFirst(context: AuthRequestContext, userId: string) {
    const challenges = deps.challenges;
    const token = context.challengeCookie;
    if (challenges === undefined || token === undefined) return null;
    const resumed = await fromStore(context, () => challenges.resume(token));
    if (resumed === null || resumed.purpose !== passkeyPurpose || resumed.user.id !== userId)
      return null;
    if (!(await fromStore(context, () => challenges.spend(token)))) return null;
    return resumed.user;
  }

  return async function passkeyAuthorize(
    credentials: Partial<Record<string, unknown>>,
    context: AuthRequestContext,
    passkey: PasskeyCeremony,
  ): Promise<SignedInUser | null> {
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
    // Possession alone under SECOND_FACTOR=required: it signs in after this account's password.
    if (verdict.outcome === 'refused' && verdict.code === 'passkey_unverified') {
      const user = await passwordFirst(context, verdict.userId);
      if (user !== null) {
        deps.log.info({ userId: user.id, clientIp, method: 'password passkey' }, 'signed in');
        context.signInResult = 'success';
        context.verifiedCredential = {
          userId: user.id,
          credentialVersion: user.credentialVersion,
          proofs: ['password', 'passkey'],
        };
        return { id: user.id, email: user.email, name: user.name };
      }
    }
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
