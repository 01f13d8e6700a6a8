import type { Kysely } from 'kysely';
import { Secret } from 'otpauth';
import type {
  SignInAddition,
  SignInAttempt,
  SignInCheck,
  SignInVerdict,
} from '../../auth/signin/sign-in-check.js';
import { fromStore } from '../../auth/request/request-context.js';
import type { SignInChallenges } from '../../challenge/challenges.js';
import { spendChallenge } from '../../challenge/challenge-store.js';
import type { Database } from '../../db/schema.js';
import { HttpError } from '../../http/errors.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { User } from '../../users/store.js';
import { secondFactorsOf, type AccountWayIn, type Factor } from '../second-factors.js';
import type { MailRequestLimiter } from '../mail-limits.js';
import type { PagePaths } from '../paths.js';
import { lockFactors, voidChallenges } from '../model/factor-lock.js';
import { consumeById } from '../model/secrets.js';
import { challengeCodeLive } from './challenge-codes.js';
import { enrolmentPurpose, enrolmentWayIn, type EnrolmentPort } from './enrolment-step.js';
import type { TotpPorts } from './factor-ports.js';
import { openEnrolment, proveEnrolmentCode, type EnrolmentCodeProof } from './enrolment-codes.js';
import { recordFactorChange } from './factor-change.js';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes.js';
import type { SecondStep } from './second-step.js';
import type { SecretBox } from './secret-box.js';
import { enrolmentOf, matchingStep, readTotpCode } from './totp-code.js';
import { enableTotp, replaceRecoveryCodes } from './totp-store.js';

/*
 * SECOND_FACTOR=required: a right password of an account without a second factor signs nobody
 * in; it is answered `second_factor_enrolment_required` with a sign-in challenge
 * (src/challenge/), and the person enrols an authenticator app with it, without
 * typing the password again. The app's key is derived from the challenge under a server key (so the page shows the
 * same key however often it is reloaded, and nothing is stored until a code of it comes back);
 * the sign-in post carrying the challenge and a right code turns TOTP on, makes the recovery
 * codes, and signs in with both factors proven.
 *
 * The password alone does not enrol (issue 35): the challenge is opened with a short code mailed
 * to the account's address (src/account/totp/enrolment-codes.ts), and the enrolling post must
 * carry it (`emailCode`) beside the app's code; a wrong one is charged as a second-factor
 * attempt and spends one of its five tries. Mail off, nothing can be mailed: the answer is
 * `enrolment_code_required`, and only an operator's one-time enrolment code (accepted with mail
 * on too) proves the enrolment.
 *
 * Only a challenge issued for an enrolment enrols, and only while the account has no second
 * factor: one issued for the code step or the passkey step does not, and every change of the
 * account's factors (TOTP on or off, a passkey added or removed, an operator's reset) voids
 * the live ones, so a challenge a password got while the owner had a factor never enrols the
 * password holder's app after the owner changed it.
 *
 * An account with a passkey has a second factor (a passkey with user verification proves both
 * factors): its password alone is answered `passkey_required` and a challenge that stands for
 * the password until a passkey follows (src/account/passkeys/passkey-authorize.ts), so whoever holds only
 * the password cannot enrol an app of their own.
 */

/**
 * The authenticator app's key for a challenge: an HMAC of it under a key derived from FACTOR_KEY
 * with a label of its own, so only the server computes it (whoever saw the challenge cookie in
 * a log or a HAR file learns nothing of the key).
 */
export function enrolmentSecret(box: Pick<SecretBox, 'mac'>, challenge: string): string {
  const digest = box.mac('sign-in enrolment key v1', challenge);
  return new Secret({ buffer: new Uint8Array(digest.subarray(0, 20)).buffer }).base32;
}

export interface SignInEnrolmentDeps {
  db: Kysely<Database>;
  box: SecretBox;
  /** The one path a second factor's code is charged on (its throttle). */
  secondStep: Pick<SecondStep, 'attempt'>;
  factors: readonly Factor[];
  challenges: Pick<SignInChallenges, 'resume'>;
  /** For the enrolment's code and the notice TOTP's enrolment sends; none when mail is off. */
  mail: MailQueue | undefined;
  /** The per-account mail budget the enrolment's code is charged to. */
  mailRequests: Pick<MailRequestLimiter, 'chargeAccount'>;
  /** The issuer an authenticator app shows beside the account (PAGE_PRODUCT_NAME). */
  issuer: string;
  /** Where the pages live (ACCOUNT_PAGES_PATH): the notice's "this wasn't me" link. */
  pages: PagePaths;
  now: () => number;
  log: { error(fields: object, message: string): void };
}

const present = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** A race lost inside the enrolment's transaction: everything in it is rolled back. */
class EnrolmentLost extends Error {}

type Refusal = 'otp' | 'email_code';

/** TOTP on with `secret`, the challenge (and an operator's code) spent, in one transaction. */
async function enrol(
  deps: SignInEnrolmentDeps,
  user: User,
  signIn: SignInAttempt,
  enrolment: { challenge: string; secret: string; step: number; proof: EnrolmentCodeProof },
): Promise<string[] | null> {
  const { challenge, secret, step, proof } = enrolment;
  const now = deps.now();
  const fresh = newRecoveryCodes();
  try {
    await deps.db.transaction().execute(async (trx) => {
      // Under the account's lock: a factor change commits before (and voided this
      // challenge) or waits until this one is done. The challenge (and its mailed code) is
      // spent here, with the change it made: two posts of it racing enrol once, and it never
      // enrols again. A race lost on the way rolls everything back (an operator's code too).
      await lockFactors(trx, user.id);
      if (!(await spendChallenge(trx, challenge, now, enrolmentPurpose))) throw new EnrolmentLost();
      if (proof.by === 'operator' && !(await consumeById(trx, proof.tokenId, 'enrolment', now)))
        throw new EnrolmentLost();
      if (!(await enableTotp(trx, user.id, deps.box.seal(user.id, secret), step, now)))
        throw new EnrolmentLost();
      const hashes = fresh.map((one) => recoveryCodeHash(user.id, one));
      await replaceRecoveryCodes(trx, user.id, hashes, now, true);
      await voidChallenges(trx, user.id, now);
      await recordFactorChange(trx, {
        user,
        type: 'totp_enabled',
        client: {
          ip: signIn.ip,
          device: signIn.device,
          origin: signIn.origin,
          pages: deps.pages,
        },
        mail: deps.mail,
        now,
        says: `Two-step sign-in with an authenticator app was turned on for your account as it signed in.`,
      });
    });
  } catch (error) {
    if (error instanceof EnrolmentLost) return null;
    throw error;
  }
  return fresh;
}

/** The key a live enrolment challenge enrols, and where its code went, for the auth wing's pages. */
function enrolmentPort(deps: SignInEnrolmentDeps): EnrolmentPort {
  const mailOn = deps.mail !== undefined;
  return {
    async keyFor(challenge) {
      // A store failure is marked as such (the routes answer it 503, anything else 500).
      const resumed = await fromStore(undefined, () => deps.challenges.resume(challenge));
      if (resumed === null || resumed.purpose !== enrolmentPurpose) return null;
      const { user } = resumed;
      const factors = await fromStore(undefined, () => secondFactorsOf(deps.factors, user.id));
      if (factors.totp || factors.passkeys > 0) return null;
      // Mail on, a challenge whose code is used up (or one opened before codes were mailed)
      // enrols nothing: the person signs in again for a new code.
      if (
        mailOn &&
        !(await fromStore(undefined, () => challengeCodeLive(deps.db, challenge, deps.now())))
      )
        return null;
      const secret = enrolmentSecret(deps.box, challenge);
      return {
        secret,
        ...enrolmentOf(secret, deps.issuer, user.email),
        codeSentTo: mailOn ? user.email : null,
      };
    },
  };
}

/**
 * The recovery codes an enrolment made, shown by the sign-in's answer this once: beside the
 * JSON answer's `url`, or for a browser a page in place of the redirect, with its cookies.
 */
function showCodes(recoveryCodes: readonly string[]): SignInAddition {
  return {
    json: { recoveryCodes },
    page: (reply, pages, { continueUrl, cookies }) =>
      pages.enrolled(reply, { recoveryCodes, continueUrl, cookies }),
  };
}

export function createSignInEnrolment(deps: SignInEnrolmentDeps): {
  check: SignInCheck;
  port: EnrolmentPort;
} {
  const mailOn = deps.mail !== undefined;
  // Mail on: the first answer says a code was mailed; mail off: an operator's code is needed.
  const enrolmentRequired: Extract<SignInVerdict, { ok: false }> = {
    ok: false,
    code: mailOn ? 'second_factor_enrolment_required' : 'enrolment_code_required',
  };
  const codeRequired: Extract<SignInVerdict, { ok: false }> = {
    ok: false,
    code: mailOn ? 'email_code_required' : 'enrolment_code_required',
  };

  /** The password's answer: the challenge opened, its code mailed (within the budget). */
  async function open(user: User, signIn: SignInAttempt): Promise<SignInVerdict> {
    if (deps.mail !== undefined) {
      try {
        await deps.mailRequests.chargeAccount(user.id);
      } catch (error) {
        // A window's share of these mails went out: no new code (and no challenge) until it
        // ends. Said in a code of its own: no wrong code was typed, nothing is paused.
        if (!(error instanceof HttpError) || error.code !== 'rate_limited') throw error;
        return { ok: false, code: 'email_code_limited' };
      }
    }
    const links = { origin: signIn.origin, pages: deps.pages, now: deps.now() };
    const challenge = await openEnrolment(deps.db, deps.mail, user, links, signIn.firstProof);
    return { ...enrolmentRequired, challenge };
  }

  const check: SignInCheck = {
    name: 'second_factor_enrolment',
    async check(user, signIn): Promise<SignInVerdict> {
      const factors = await secondFactorsOf(deps.factors, user.id);
      // The TOTP check before this one asked for its code.
      if (factors.totp) return { ok: true };
      if (factors.passkeys > 0) return { ok: false, code: 'passkey_required' };
      const challenge = signIn.challenge;
      if (challenge === undefined) return open(user, signIn);
      if (signIn.challengePurpose !== enrolmentPurpose) return enrolmentRequired;
      const { otp, emailCode } = signIn.credentials;
      if (!present(otp)) return enrolmentRequired;
      if (!present(emailCode)) return codeRequired;
      const secret = enrolmentSecret(deps.box, challenge);
      // One attempt for both codes, on the second factor's own count: the app's code is
      // checked first (it spends nothing), then the mailed (or operator's) code spends a try.
      let refused = 'otp' as Refusal;
      const wrong = (which: Refusal) => {
        refused = which;
        return { right: false as const, seen: undefined };
      };
      const result = await deps.secondStep.attempt(user, signIn, async () => {
        const code = readTotpCode(otp);
        const step = code === null ? null : matchingStep(secret, code, deps.now());
        if (step === null) return wrong('otp');
        const typed = { challenge, email: user.email, typed: emailCode, now: deps.now() };
        const proof = await proveEnrolmentCode(deps.db, typed);
        if (proof === null) return wrong('email_code');
        const codes = await enrol(deps, user, signIn, { challenge, secret, step, proof });
        return codes === null ? wrong('otp') : { right: true as const, value: codes };
      });
      if ('throttled' in result)
        return { ok: false, code: 'rate_limited', retryAfterSeconds: result.retryAfterSeconds };
      if (!result.right)
        return {
          ok: false,
          code: refused === 'email_code' ? 'email_code_invalid' : 'second_factor_invalid',
          wrong: true,
        };
      return { ok: true, proof: 'otp', addition: showCodes(result.value), challengeSpent: true };
    },
  };

  return { check, port: enrolmentPort(deps) };
}

/**
 * Enrolment at sign-in as a way in: with SECOND_FACTOR=required (and a usable key), the last
 * check after the password; otherwise its route answers 404 and it checks nothing.
 */
export function signInEnrolmentWayIn(
  ports: Omit<SignInEnrolmentDeps, 'issuer'> & { totp: TotpPorts | undefined },
): AccountWayIn {
  const totp = ports.totp;
  const enrolment =
    totp?.mode === 'required'
      ? createSignInEnrolment({ ...ports, issuer: totp.issuer })
      : undefined;
  return { wayIn: enrolmentWayIn(enrolment) };
}
