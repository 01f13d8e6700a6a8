import { CredentialsSignin } from '@auth/core/errors';
import { readEmail } from '../../users/email.js';
import type { PasswordHasher } from '../../users/hasher.js';
import { readPassword } from '../../users/password.js';
import type { User, UserStore } from '../../users/store.js';
import { GateFullError } from '../../traffic/work-gate.js';
import type { DeviceCookies } from '../cookies/device-cookie.js';
import { fromStore, interrupt, type AuthRequestContext } from '../request/request-context.js';
import { provePassword, type Proof } from './password-proof.js';
import type { Throttle } from './throttle.js';

/** Auth.js turns this into `?error=CredentialsSignin&code=rate_limited`. */
export class RateLimited extends CredentialsSignin {
  override code = 'rate_limited';
}

/**
 * A check after the password refused the sign-in (an unverified address, a second factor asked
 * for or wrong). Auth.js turns it into `?error=CredentialsSignin&code=<code>`, so an unchanged
 * `signIn('credentials', { redirect: false })` returns the code; no session is issued.
 */
export class SignInCheckRefused extends CredentialsSignin {
  constructor(code: string) {
    super();
    this.code = code;
  }
}

/** What a check after the password says: go on (with what it proved), or refuse with a code. */
export type SignInVerdict =
  | {
      ok: true;
      proof?: string;
      /** Recovery codes this sign-in made (an enrolment), for its answer to show once. */
      recoveryCodes?: readonly string[];
      /** The check spent the sign-in's challenge itself, in the transaction of its change. */
      challengeSpent?: true;
    }
  | {
      ok: false;
      /** The code the client receives (`email_unverified`, `second_factor_required`, …). */
      code: string;
      /** A limit is reached: answered as a throttled sign-in (429 with Retry-After). */
      retryAfterSeconds?: number;
      /**
       * The challenge this refusal leaves in the browser, when the check opened it itself
       * (with what goes with it: an enrolment's mailed code); else sign-in issues one.
       */
      challenge?: string;
    };

/** The sign-in being checked, as a check after the password sees it. */
export interface SignInAttempt {
  /** Every field the client posted (a second factor's code rides beside the password). */
  credentials: Partial<Record<string, unknown>>;
  ip: string;
  /** The User-Agent ('' when none), for the account's record. */
  device: string;
  /** The client proved an earlier sign-in (device cookie): charged as the password was. */
  knownDevice: boolean;
  /** The public origin, for any link a check mails. */
  origin: string;
  /** The second step's challenge, when it stands for the password in this post. */
  challenge?: string | undefined;
  /** What that challenge was issued for: a check takes it for that alone. */
  challengePurpose?: ChallengePurpose | undefined;
}

/**
 * One check that runs after a right password, in the order the account wing lists them
 * (src/account/signin-checks.ts): the verified-address gate first, then each second factor.
 * A check runs only once the password is proven, so a guesser learns nothing from its refusal.
 */
export interface SignInCheck {
  /** For the log and the account's record. */
  name: string;
  check(user: User, attempt: SignInAttempt): Promise<SignInVerdict>;
}

/**
 * What a challenge stands in for, recorded as it is issued: the code step after
 * `second_factor_required`, an enrolment after `second_factor_enrolment_required`, a passkey
 * after `passkey_required` (SECOND_FACTOR=required: the password and a passkey without user
 * verification are two factors together). Every challenge stands for a right password.
 */
export type ChallengePurpose = 'second_step' | 'enrolment' | 'passkey';

/** The refusals after which the browser holds a challenge, and what it is for. */
const challengedCodes = new Map<string, ChallengePurpose>([
  ['second_factor_required', 'second_step'],
  ['second_factor_enrolment_required', 'enrolment'],
  // Mail off: the enrolment waits for an operator's enrolment code.
  ['enrolment_code_required', 'enrolment'],
  ['passkey_required', 'passkey'],
]);

/**
 * The second step without the password again (src/account/totp/challenges.ts implements it):
 * after a right password that a check answered `second_factor_required`, a challenge the
 * browser holds stands for that password for a few minutes, and the next post sends only the
 * code with it.
 */
export interface SignInChallenges {
  issue(user: Pick<User, 'id' | 'credentialVersion'>, purpose: ChallengePurpose): Promise<string>;
  /**
   * The enabled account a live challenge stands for, still at its credential version, and what
   * the challenge was issued for.
   */
  resume(token: string): Promise<{ user: User; purpose: ChallengePurpose } | null>;
  /** Spends it: true for exactly one caller. */
  spend(token: string): Promise<boolean>;
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
  /** Run in order after a right password; the first refusal ends the sign-in. */
  checks?: readonly SignInCheck[] | undefined;
  challenges?: SignInChallenges | undefined;
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
  /**
   * What follows a right password (or a challenge standing for one): the checks in order, a
   * hash upgrade, and what the session is issued for.
   */
  async function afterPassword(
    user: User,
    request: {
      credentials: Partial<Record<string, unknown>>;
      context: AuthRequestContext;
      knownDevice: boolean;
      password: string | null;
      challenge?: { token: string; purpose: ChallengePurpose };
    },
  ): Promise<SignedInUser | null> {
    const { credentials, context, knownDevice, password } = request;
    const challenge = request.challenge?.token;
    let challengeSpent = false;
    const clientIp = context.clientIp;
    try {
      // Only once the password is proven: a guesser learns nothing from these refusals.
      const proofs = ['password'];
      const attempt = {
        credentials,
        ip: clientIp,
        device: context.userAgent ?? '',
        knownDevice,
        origin: context.origin,
        challenge,
        challengePurpose: request.challenge?.purpose,
      };
      for (const check of deps.checks ?? []) {
        const verdict = await fromStore(context, () => check.check(user, attempt));
        if (verdict.ok) {
          if (verdict.proof !== undefined) proofs.push(verdict.proof);
          if (verdict.recoveryCodes !== undefined) context.recoveryCodes = verdict.recoveryCodes;
          if (verdict.challengeSpent === true) challengeSpent = true;
          continue;
        }
        if (verdict.retryAfterSeconds !== undefined) {
          interrupt(context, {
            kind: 'throttled',
            retryAfterSeconds: verdict.retryAfterSeconds,
            afterPassword: true,
          });
          // No `throttled` record ("too many wrong passwords"): the password was right, and the
          // check records its own lock when it sets one.
          deps.log.info({ reason: 'throttled', check: check.name, clientIp }, 'sign-in refused');
          throw new RateLimited();
        }
        const reason = verdict.code;
        deps.log.info({ reason, check: check.name, clientIp, userId: user.id }, 'sign-in refused');
        context.signInResult = 'invalid';
        context.accountEvent = { type: 'signin_failed', userId: user.id, detail: { reason } };
        const challenges = deps.challenges;
        const purpose = challengedCodes.get(reason);
        if (verdict.challenge !== undefined) context.issuedChallenge = verdict.challenge;
        else if (purpose !== undefined && challenge === undefined && challenges) {
          context.issuedChallenge = await fromStore(context, () => challenges.issue(user, purpose));
        }
        throw new SignInCheckRefused(verdict.code);
      }
      // A challenge signs in once: two posts of it racing, one wins.
      const challenges = deps.challenges;
      if (challenge !== undefined && challenges !== undefined && !challengeSpent) {
        if (!(await fromStore(context, () => challenges.spend(challenge)))) {
          deps.log.info({ reason: 'challenge_spent', clientIp }, 'sign-in refused');
          context.signInResult = 'invalid';
          return null;
        }
      }
      if (password !== null && deps.hasher.needsRehash(user.passwordHash)) {
        const upgraded = await deps.hasher.hash(password);
        await fromStore(context, () =>
          deps.users.upgradePasswordHash(user.id, user.passwordHash, upgraded),
        );
      }
      deps.log.info({ userId: user.id, clientIp }, 'signed in');
      context.signInResult = 'success';
      // A hash upgrade above is no credential change: the version read with the row holds.
      context.verifiedCredential = {
        userId: user.id,
        credentialVersion: user.credentialVersion,
        proofs,
      };
      // The bridge sets it only if Auth.js then issues the session.
      context.issuedDeviceCookie = deps.deviceCookies.issue(
        user.email,
        user.credentialVersion,
        deps.now(),
      );
      return { id: user.id, email: user.email, name: user.name };
    } catch (error) {
      if (error instanceof SignInCheckRefused || error instanceof RateLimited) throw error;
      if (error instanceof GateFullError) interrupt(context, { kind: 'overloaded' });
      else interrupt(context, { kind: 'internal', error });
      throw error;
    }
  }

  return async function authorize(
    credentials: Partial<Record<string, unknown>>,
    context: AuthRequestContext,
  ): Promise<SignedInUser | null> {
    const clientIp = context.clientIp;
    const rawEmail = field(credentials, 'email');
    const rawPassword = field(credentials, 'password');
    const challenge = context.challengeCookie;
    // The second step: no password, but the challenge a right one left in this browser.
    if (
      (rawPassword === null || rawPassword === '') &&
      challenge !== undefined &&
      deps.challenges !== undefined
    ) {
      const challenges = deps.challenges;
      const resumed = await fromStore(context, () => challenges.resume(challenge));
      if (resumed === null) {
        deps.log.info({ reason: 'challenge_unknown', clientIp }, 'sign-in refused');
        context.signInResult = 'invalid';
        return null;
      }
      const { user, purpose } = resumed;
      const knownDevice =
        context.deviceCookie !== undefined &&
        deps.deviceCookies.verify(context.deviceCookie, user.email, deps.now()) ===
          user.credentialVersion;
      return afterPassword(user, {
        credentials,
        context,
        knownDevice,
        password: null,
        challenge: { token: challenge, purpose },
      });
    }
    // Length and runs of marks are checked before NFKC, which bounds its cost; no database or
    // hashing work is done for a refusal, but it is charged as a wrong password would be.
    const email = rawEmail === null ? null : readEmail(rawEmail);
    const password = email === null || rawPassword === null ? null : readPassword(rawPassword);
    // Checked after the length bound above: the MAC costs no more than a throttle key.
    const deviceVersion =
      email !== null && context.deviceCookie !== undefined
        ? deps.deviceCookies.verify(context.deviceCookie, email, deps.now())
        : null;
    // A device cookie that verifies was issued to a sign-in to this address, so its holder knows
    // the account exists: looking it up now tells them nothing. The device stays known only
    // while the account's credential version is the one it signed in under.
    const holder =
      deviceVersion === null || email === null
        ? undefined
        : await fromStore(context, () => deps.users.findByEmail(email));
    const knownDevice =
      holder !== undefined && holder !== null && holder.credentialVersion === deviceVersion;
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

    const ports = {
      throttle: deps.throttle,
      hasher: deps.hasher,
      now: deps.now,
      store: <T>(work: () => Promise<T>) => fromStore(context, work),
      log: deps.log,
    };
    let proof: Proof<User>;
    try {
      proof = await provePassword(
        ports,
        { email, ip: clientIp, knownDevice },
        password,
        () => (holder === undefined ? deps.users.findByEmail(email) : Promise.resolve(holder)),
        (user) => !user.disabled,
      );
    } catch (error) {
      if (error instanceof GateFullError) interrupt(context, { kind: 'overloaded' });
      else interrupt(context, { kind: 'internal', error });
      throw error;
    }
    if (proof.outcome === 'throttled') {
      interrupt(context, { kind: 'throttled', retryAfterSeconds: proof.retryAfterSeconds });
      // Whether the address has an account is looked up after the answer is out.
      context.accountEvent = { type: 'throttled', email };
      deps.log.info({ reason: 'throttled', clientIp }, 'sign-in refused');
      throw new RateLimited();
    }
    if (proof.outcome === 'wrong') {
      const user = proof.holder;
      const reason =
        user === null ? 'unknown_email' : proof.matched ? 'disabled' : 'wrong_password';
      deps.log.info({ reason, clientIp, userId: user?.id }, 'sign-in refused');
      context.signInResult = 'invalid';
      // Only noted here (a property set on both paths' object costs alike); the record is
      // written after the answer has gone out, and never for an unknown address.
      if (user !== null) {
        context.accountEvent = { type: 'signin_failed', userId: user.id, detail: { reason } };
      }
      return null;
    }
    return afterPassword(proof.holder, { credentials, context, knownDevice, password });
  };
}
