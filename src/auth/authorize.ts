import { CredentialsSignin } from '@auth/core/errors';
import { readEmail } from '../users/email.js';
import { unknownUserPasswordHash, type PasswordHasher } from '../users/hasher.js';
import { readPassword } from '../users/password.js';
import type { User, UserStore } from '../users/store.js';
import { GateFullError } from '../traffic/work-gate.js';
import type { DeviceCookies } from './device-cookie.js';
import { fromStore, interrupt, type AuthRequestContext } from './request-context.js';
import type { Throttle } from './throttle.js';

/** Auth.js turns this into `?error=CredentialsSignin&code=rate_limited`. */
export class RateLimited extends CredentialsSignin {
  override code = 'rate_limited';
}

/**
 * REQUIRE_VERIFIED_EMAIL: the password was right but the address is not verified. Auth.js turns
 * it into `?error=CredentialsSignin&code=email_unverified`; no session is issued.
 */
export class EmailUnverified extends CredentialsSignin {
  override code = 'email_unverified';
}

/** REQUIRE_VERIFIED_EMAIL's part of sign-in (src/account/unverified-signin.ts implements it). */
export interface VerifiedEmailGate {
  /** Whether the user's address is verified. */
  isVerified(userId: string): Promise<boolean>;
  /**
   * Told when a correct password was refused for an unverified address: it queues a fresh
   * "confirm your address" mail (within the mail request limits). Fire and forget.
   */
  refused(user: User, client: { ip: string; origin: string }): void;
}

export interface SignedInUser {
  id: string;
  email: string;
  name: string;
}

export interface AuthorizeDeps {
  users: UserStore;
  hasher: PasswordHasher;
  throttle: Throttle;
  deviceCookies: DeviceCookies;
  /** Set when REQUIRE_VERIFIED_EMAIL is true; absent: any address may sign in. */
  verifiedEmail?: VerifiedEmailGate | undefined;
  now: () => number;
  log: {
    info(fields: object, message: string): void;
    error(fields: object, message: string): void;
  };
}

function field(credentials: Partial<Record<string, unknown>>, name: string): string | null {
  const value = credentials[name];
  return typeof value === 'string' ? value : null;
}

/**
 * The Credentials provider's check. Every refusal is the same `null` (Auth.js answers
 * `code=credentials`) and costs exactly one argon2 verification, so neither the answer nor its
 * timing says whether the account exists or is disabled.
 */
export function createAuthorize(deps: AuthorizeDeps) {
  return async function authorize(
    credentials: Partial<Record<string, unknown>>,
    context: AuthRequestContext,
  ): Promise<SignedInUser | null> {
    const clientIp = context.clientIp;
    const rawEmail = field(credentials, 'email');
    const rawPassword = field(credentials, 'password');
    // Length and runs of marks are checked before NFKC, which bounds its cost; no database or
    // hashing work is done for a refusal, but it is charged as a wrong password would be.
    const email = rawEmail === null ? null : readEmail(rawEmail);
    const password = email === null || rawPassword === null ? null : readPassword(rawPassword);
    // Checked after the length bound above: the MAC costs no more than a throttle key.
    const knownDevice =
      email !== null &&
      context.deviceCookie !== undefined &&
      deps.deviceCookies.verify(context.deviceCookie, email, deps.now());
    if (email === null || password === null) {
      const retryAfterSeconds = await fromStore(context, () =>
        deps.throttle.refused(email, clientIp, deps.now(), knownDevice),
      );
      if (retryAfterSeconds !== null) {
        interrupt(context, { kind: 'throttled', retryAfterSeconds });
        if (email !== null) context.accountEvent = { type: 'throttled', email };
        deps.log.info({ reason: 'throttled', clientIp }, 'sign-in refused');
        throw new RateLimited();
      }
      deps.log.info({ reason: 'malformed', clientIp }, 'sign-in refused');
      context.signInResult = 'invalid';
      return null;
    }

    const admission = await fromStore(context, () =>
      deps.throttle.admit(email, clientIp, deps.now(), knownDevice),
    );
    if (!admission.admitted) {
      interrupt(context, { kind: 'throttled', retryAfterSeconds: admission.retryAfterSeconds });
      // Whether the address has an account is looked up after the answer is out.
      context.accountEvent = { type: 'throttled', email };
      deps.log.info({ reason: 'throttled', clientIp }, 'sign-in refused');
      throw new RateLimited();
    }

    let checked = false;
    try {
      const user = await fromStore(context, () => deps.users.findByEmail(email));
      const hash = user?.passwordHash ?? unknownUserPasswordHash;
      const matches = await deps.hasher.verify(hash, password);
      checked = true;
      if (user === null || !matches || user.disabled) {
        const reason = user === null ? 'unknown_email' : matches ? 'disabled' : 'wrong_password';
        deps.log.info({ reason, clientIp, userId: user?.id }, 'sign-in refused');
        context.signInResult = 'invalid';
        // Only noted here (a property set on both paths' object costs alike); the record is
        // written after the answer has gone out, and never for an unknown address.
        if (user !== null) {
          context.accountEvent = { type: 'signin_failed', userId: user.id, detail: { reason } };
        }
        return null;
      }
      await fromStore(context, () =>
        deps.throttle.succeeded(admission.keys, admission.pastEmailLock),
      );
      // Only once the password is proven: a guesser learns nothing from this refusal.
      const gate = deps.verifiedEmail;
      if (gate !== undefined && !(await fromStore(context, () => gate.isVerified(user.id)))) {
        deps.log.info({ reason: 'email_unverified', clientIp, userId: user.id }, 'sign-in refused');
        context.signInResult = 'invalid';
        context.accountEvent = {
          type: 'signin_failed',
          userId: user.id,
          detail: { reason: 'email_unverified' },
        };
        gate.refused(user, { ip: clientIp, origin: context.origin });
        throw new EmailUnverified();
      }
      if (deps.hasher.needsRehash(user.passwordHash)) {
        const upgraded = await deps.hasher.hash(password);
        await fromStore(context, () =>
          deps.users.upgradePasswordHash(user.id, user.passwordHash, upgraded),
        );
      }
      deps.log.info({ userId: user.id, clientIp }, 'signed in');
      context.signInResult = 'success';
      // A hash upgrade above is no credential change: the version read with the row holds.
      context.verifiedCredential = { userId: user.id, credentialVersion: user.credentialVersion };
      // The bridge sets it only if Auth.js then issues the session.
      context.issuedDeviceCookie = deps.deviceCookies.issue(email, deps.now());
      return { id: user.id, email: user.email, name: user.name };
    } catch (error) {
      if (error instanceof EmailUnverified) throw error;
      if (error instanceof GateFullError) interrupt(context, { kind: 'overloaded' });
      else interrupt(context, { kind: 'internal', error });
      if (!checked) {
        await deps.throttle.notChecked(admission.keys).catch((refundError: unknown) => {
          deps.log.error({ err: refundError }, 'could not take back a throttle charge');
        });
      }
      throw error;
    }
  };
}
