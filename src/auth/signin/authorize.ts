import { readEmail } from '../../users/email.js';
import type { PasswordHasher } from '../../users/hasher.js';
import { readPassword } from '../../users/password.js';
import type { User, UserStore } from '../../users/store.js';
import { GateFullError } from '../../traffic/work-gate.js';
import type { ChallengePurpose, SignInChallenges } from '../../challenge/challenges.js';
import type { DeviceCookies } from '../cookies/device-cookie.js';
import {
  fromStore,
  interrupt,
  type AuthRequestContext,
  type ProofCharge,
} from '../request/request-context.js';
import { attempt, provePassword, type Proof } from './password-proof.js';
import {
  RateLimited,
  SignInCheckRefused,
  type SignedInUser,
  type SignInCheck,
  type SignInVerdict,
} from './sign-in-check.js';
import type { Throttle } from './throttle.js';

export {
  RateLimited,
  SignInCheckRefused,
  type SignedInUser,
  type SignInAttempt,
  type SignInCheck,
  type SignInVerdict,
} from './sign-in-check.js';

export interface AuthorizeDeps {
  users: UserStore;
  hasher: PasswordHasher;
  throttle: Throttle;
  deviceCookies: DeviceCookies;
  /** Run in order after a right password; the first refusal ends the sign-in. */
  checks?: readonly SignInCheck[] | undefined;
  /**
   * The sign-in challenge (src/challenge/): after a refusal that opens one, the browser's next
   * post sends what was asked for without the password again.
   */
  challenges?: SignInChallenges | undefined;
  /** The refusal codes after which the browser holds a challenge, and what it is for. */
  challengeOpenedBy?: ReadonlyMap<string, ChallengePurpose> | undefined;
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

/** A right password (or a challenge standing for one), on its way through the checks. */
interface Proven {
  credentials: Partial<Record<string, unknown>>;
  context: AuthRequestContext;
  knownDevice: boolean;
  password: string | null;
  /** What proved the account: `password`, or a way in's own (`identity:<provider>`). */
  firstProof: string;
  challenge?: { token: string; purpose: ChallengePurpose };
}

/** Anything thrown past a refusal is ours: the gate's shedding, or a failure. */
function interruptFor(context: AuthRequestContext, error: unknown): void {
  if (error instanceof GateFullError) interrupt(context, { kind: 'overloaded' });
  else interrupt(context, { kind: 'internal', error });
}

/**
 * A check's refusal: a limit answered as throttled, else the code recorded, with the challenge
 * the check opened (or the one its code opens, when the post held none), and thrown.
 */
async function refuse(
  deps: AuthorizeDeps,
  user: User,
  proven: Proven,
  check: SignInCheck,
  verdict: Extract<SignInVerdict, { ok: false }>,
): Promise<never> {
  const { context } = proven;
  const clientIp = context.clientIp;
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
  if (verdict.wrong) {
    context.accountEvent = { type: 'signin_failed', userId: user.id, detail: { reason } };
  }
  const challenges = deps.challenges;
  const purpose = deps.challengeOpenedBy?.get(reason);
  if (verdict.challenge !== undefined) context.issuedChallenge = verdict.challenge;
  else if (purpose !== undefined && proven.challenge === undefined && challenges) {
    context.issuedChallenge = await fromStore(context, () =>
      challenges.issue(user, purpose, proven.firstProof),
    );
  }
  throw new SignInCheckRefused(verdict.code);
}

/** The checks in order: what they proved, and whether one spent the challenge itself. */
async function runChecks(
  deps: AuthorizeDeps,
  user: User,
  proven: Proven,
): Promise<{ proofs: string[]; challengeSpent: boolean }> {
  const { context } = proven;
  const proofs = [proven.firstProof];
  let challengeSpent = false;
  const attempt = {
    credentials: proven.credentials,
    ip: context.clientIp,
    device: context.userAgent ?? '',
    knownDevice: proven.knownDevice,
    origin: context.origin,
    challenge: proven.challenge?.token,
    challengePurpose: proven.challenge?.purpose,
    firstProof: proven.firstProof,
  };
  for (const check of deps.checks ?? []) {
    const verdict = await fromStore(context, () => check.check(user, attempt));
    if (!verdict.ok) return refuse(deps, user, proven, check, verdict);
    if (verdict.proof !== undefined) proofs.push(verdict.proof);
    if (verdict.addition !== undefined) context.addition = verdict.addition;
    if (verdict.challengeSpent === true) challengeSpent = true;
  }
  return { proofs, challengeSpent };
}

/**
 * What follows a right password (or a challenge standing for one): the checks in order (only
 * once the password is proven: a guesser learns nothing from their refusals), a hash upgrade,
 * and what the session is issued for.
 */
async function afterPassword(
  deps: AuthorizeDeps,
  user: User,
  proven: Proven,
): Promise<SignedInUser | null> {
  const { context, password } = proven;
  const challenge = proven.challenge?.token;
  const clientIp = context.clientIp;
  try {
    const { proofs, challengeSpent } = await runChecks(deps, user, proven);
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
    return { id: user.id, email: user.email, name: user.name };
  } catch (error) {
    if (error instanceof SignInCheckRefused || error instanceof RateLimited) throw error;
    interruptFor(context, error);
    throw error;
  }
}

/** The next step: no password, but the challenge a right one left in this browser. */
async function resumeChallenge(
  deps: AuthorizeDeps & { challenges: SignInChallenges },
  credentials: Partial<Record<string, unknown>>,
  context: AuthRequestContext,
  challenge: string,
): Promise<SignedInUser | null> {
  const resumed = await fromStore(context, () => deps.challenges.resume(challenge));
  if (resumed === null) {
    deps.log.info({ reason: 'challenge_unknown', clientIp: context.clientIp }, 'sign-in refused');
    context.signInResult = 'invalid';
    return null;
  }
  const { user, purpose, firstProof } = resumed;
  const knownDevice =
    context.deviceCookie !== undefined &&
    deps.deviceCookies.verify(context.deviceCookie, user.email, deps.now()) ===
      user.credentialVersion;
  return afterPassword(deps, user, {
    credentials,
    context,
    knownDevice,
    password: null,
    firstProof,
    challenge: { token: challenge, purpose },
  });
}

/**
 * The holder of a device cookie that verifies for this address. Such a cookie was issued to a
 * sign-in to this address, so its holder knows the account exists: looking it up now tells
 * them nothing. The device stays known only while the account's credential version is the one
 * it signed in under. Checked after the length bound: the MAC costs no more than a throttle key.
 */
async function deviceHolder(
  deps: AuthorizeDeps,
  context: AuthRequestContext,
  email: string | null,
): Promise<{ holder: User | null | undefined; knownDevice: boolean }> {
  const deviceVersion =
    email !== null && context.deviceCookie !== undefined
      ? deps.deviceCookies.verify(context.deviceCookie, email, deps.now())
      : null;
  const holder =
    deviceVersion === null || email === null
      ? undefined
      : await fromStore(context, () => deps.users.findByEmail(email));
  const knownDevice =
    holder !== undefined && holder !== null && holder.credentialVersion === deviceVersion;
  return { holder, knownDevice };
}

/** A post without a usable email or password: charged as a wrong password, then refused. */
async function refuseMalformed(
  deps: AuthorizeDeps,
  context: AuthRequestContext,
  email: string | null,
  knownDevice: boolean,
): Promise<null> {
  const clientIp = context.clientIp;
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

/** The password proof's wrong or throttled outcome, recorded and answered. */
function refuseProof(
  deps: AuthorizeDeps,
  context: AuthRequestContext,
  email: string,
  proof: Exclude<Proof<User>, { outcome: 'right' }>,
): null {
  const clientIp = context.clientIp;
  if (proof.outcome === 'throttled') {
    interrupt(context, { kind: 'throttled', retryAfterSeconds: proof.retryAfterSeconds });
    // Whether the address has an account is looked up after the answer is out.
    context.accountEvent = { type: 'throttled', email };
    deps.log.info({ reason: 'throttled', clientIp }, 'sign-in refused');
    throw new RateLimited();
  }
  const user = proof.holder;
  const reason = user === null ? 'unknown_email' : proof.matched ? 'disabled' : 'wrong_password';
  deps.log.info({ reason, clientIp, userId: user?.id }, 'sign-in refused');
  context.signInResult = 'invalid';
  // Only noted here (a property set on both paths' object costs alike); the record is
  // written after the answer has gone out, and never for an unknown address.
  if (user !== null) {
    context.accountEvent = { type: 'signin_failed', userId: user.id, detail: { reason } };
  }
  return null;
}

/** A sign-in with an email and a password. */
async function withPassword(
  deps: AuthorizeDeps,
  credentials: Partial<Record<string, unknown>>,
  context: AuthRequestContext,
): Promise<SignedInUser | null> {
  const rawEmail = field(credentials, 'email');
  const rawPassword = field(credentials, 'password');
  // Length and runs of marks are checked before NFKC, which bounds its cost; no database or
  // hashing work is done for a refusal, but it is charged as a wrong password would be.
  const email = rawEmail === null ? null : readEmail(rawEmail);
  const password = email === null || rawPassword === null ? null : readPassword(rawPassword);
  const { holder, knownDevice } = await deviceHolder(deps, context, email);
  if (email === null || password === null)
    return refuseMalformed(deps, context, email, knownDevice);

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
      { email, ip: context.clientIp, knownDevice },
      password,
      () => (holder === undefined ? deps.users.findByEmail(email) : Promise.resolve(holder)),
      (user) => !user.disabled,
    );
  } catch (error) {
    interruptFor(context, error);
    throw error;
  }
  if (proof.outcome !== 'right') return refuseProof(deps, context, email, proof);
  return afterPassword(deps, proof.holder, {
    credentials,
    context,
    knownDevice,
    password,
    firstProof: 'password',
  });
}

/**
 * The Credentials provider's check. Every refusal is the same `null` (Auth.js answers
 * `code=credentials`) and costs exactly one argon2 verification, so neither the answer nor its
 * timing says whether the account exists or is disabled.
 */
export function createAuthorize(deps: AuthorizeDeps) {
  /**
   * A way in's own proof of an enabled account (an identity provider's sign-in): the checks
   * that follow a right password, then the session, as after one.
   */
  async function afterProof(
    user: User,
    firstProof: string,
    context: AuthRequestContext,
    charge: ProofCharge = {},
  ) {
    // Every sign-in attempt counts against the address's and the account's rates, successes
    // too (decisions.md): a way in's own proof as a password's (its failure charge taken back,
    // as a right password's is), and a lock holds for it, but as ProofCharge says.
    const scope = { email: user.email, ip: context.clientIp, knownDevice: !!charge.pastEmailLock };
    const ports = { throttle: deps.throttle, now: deps.now };
    const admitted = charge.charged
      ? { right: true }
      : await attempt({ ...ports, store: (work) => fromStore(context, work) }, scope, () =>
          Promise.resolve({ right: true as const, value: undefined }),
        );
    if ('throttled' in admitted) {
      interrupt(context, { kind: 'throttled', retryAfterSeconds: admitted.retryAfterSeconds });
      deps.log.info({ reason: 'throttled', clientIp: context.clientIp }, 'sign-in refused');
      context.signInResult = 'invalid';
      throw new RateLimited();
    }
    const proven = { credentials: {}, context, knownDevice: false, password: null, firstProof };
    return afterPassword(deps, user, proven);
  }
  /**
   * The device cookie for a sign-in Auth.js let through (its signIn callback, whichever way in
   * verified it): the bridge sets it only if Auth.js then issues the session.
   */
  function issueDevice(email: string, context: AuthRequestContext): void {
    const verified = context.verifiedCredential;
    if (verified === undefined) return;
    const account = { email, credentialVersion: verified.credentialVersion };
    context.issuedDevice = deps.deviceCookies.reissue(context.deviceCookie, account, deps.now());
  }
  return Object.assign(authorize, { afterProof, issueDevice });

  async function authorize(
    credentials: Partial<Record<string, unknown>>,
    context: AuthRequestContext,
  ): Promise<SignedInUser | null> {
    const rawPassword = field(credentials, 'password');
    const challenge = context.challengeCookie;
    const challenges = deps.challenges;
    if ((rawPassword === null || rawPassword === '') && challenge !== undefined && challenges) {
      return resumeChallenge({ ...deps, challenges }, credentials, context, challenge);
    }
    return withPassword(deps, credentials, context);
  }
}
