import type { Kysely } from 'kysely';
import { Secret } from 'otpauth';
import type { SignInCheck, SignInChallenges, SignInVerdict } from '../../auth/authorize.js';
import type { EnrolmentPort } from '../../auth/enrolment-port.js';
import { attempt } from '../../auth/password-proof.js';
import { fromStore } from '../../auth/request-context.js';
import type { Throttle } from '../../auth/throttle.js';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import { secondFactorsOf, type Factor } from '../factors.js';
import type { PagePaths } from '../paths.js';
import { lockFactors, voidChallenges } from '../model/factor-lock.js';
import { spendChallenge } from './challenges.js';
import { recordFactorChange } from './factor-change.js';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes.js';
import type { SecretBox } from './secret-box.js';
import { enrolmentOf, matchingStep, readTotpCode } from './totp-code.js';
import { enableTotp, replaceRecoveryCodes } from './totp-store.js';

/*
 * SECOND_FACTOR=required: a right password of an account without a second factor signs nobody
 * in; it is answered `second_factor_enrolment_required` with the second step's challenge
 * (src/account/totp/challenges.ts), and the person enrols an authenticator app with it, without
 * typing the password again. The app's key is derived from the challenge under a server key (so the page shows the
 * same key however often it is reloaded, and nothing is stored until a code of it comes back);
 * the sign-in post carrying the challenge and a right code turns TOTP on, makes the recovery
 * codes, and signs in with both factors proven.
 *
 * Only a challenge issued for an enrolment enrols, and only while the account has no second
 * factor: one issued for the code step or the passkey step does not, and every change of the
 * account's factors (TOTP on or off, a passkey added or removed, an operator's reset) voids
 * the live ones, so a challenge a password got while the owner had a factor never enrols the
 * password holder's app after the owner changed it.
 *
 * An account with a passkey has a second factor (a passkey with user verification proves both
 * factors): its password alone is answered `passkey_required` and a challenge that stands for
 * the password until a passkey follows (src/auth/passkey-authorize.ts), so whoever holds only
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
  throttle: Throttle;
  factors: readonly Factor[];
  challenges: Pick<SignInChallenges, 'resume'>;
  /** For the notice TOTP's enrolment sends; none when mail is off. */
  mail: MailQueue | undefined;
  /** The issuer an authenticator app shows beside the account (PAGE_PRODUCT_NAME). */
  issuer: string;
  /** Where the pages live (ACCOUNT_PAGES_PATH): the notice's "this wasn't me" link. */
  pages: PagePaths;
  now: () => number;
  log: { error(fields: object, message: string): void };
}

export function createSignInEnrolment(deps: SignInEnrolmentDeps): {
  check: SignInCheck;
  port: EnrolmentPort;
} {
  const enrolmentRequired: SignInVerdict = { ok: false, code: 'second_factor_enrolment_required' };

  const check: SignInCheck = {
    name: 'second_factor_enrolment',
    async check(user, signIn): Promise<SignInVerdict> {
      const factors = await secondFactorsOf(deps.factors, user.id);
      // The TOTP check before this one asked for its code.
      if (factors.totp) return { ok: true };
      if (factors.passkeys > 0) return { ok: false, code: 'passkey_required' };
      const challenge = signIn.challenge;
      if (challenge === undefined || signIn.challengePurpose !== 'enrolment')
        return enrolmentRequired;
      const typed = signIn.credentials.otp;
      if (typeof typed !== 'string' || typed === '') return enrolmentRequired;
      const secret = enrolmentSecret(deps.box, challenge);
      const scope = { email: user.email, ip: signIn.ip, knownDevice: signIn.knownDevice };
      const result = await attempt({ throttle: deps.throttle, now: deps.now }, scope, async () => {
        const code = readTotpCode(typed);
        const now = deps.now();
        const step = code === null ? null : matchingStep(secret, code, now);
        if (step === null) return { right: false as const, seen: undefined };
        const fresh = newRecoveryCodes();
        const done = await deps.db.transaction().execute(async (trx) => {
          // Under the account's lock: a factor change commits before (and voided this
          // challenge) or waits until this one is done. The challenge is spent here, with the
          // change it made: two posts of it racing enrol once, and it never enrols again.
          await lockFactors(trx, user.id);
          if (!(await spendChallenge(trx, challenge, now, 'enrolment'))) return false;
          if (!(await enableTotp(trx, user.id, deps.box.seal(user.id, secret), step, now)))
            return false;
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
          return true;
        });
        return done
          ? { right: true as const, value: fresh }
          : { right: false as const, seen: undefined };
      });
      if ('throttled' in result)
        return { ok: false, code: 'rate_limited', retryAfterSeconds: result.retryAfterSeconds };
      if (!result.right) return { ok: false, code: 'second_factor_invalid' };
      return { ok: true, proof: 'otp', recoveryCodes: result.value, challengeSpent: true };
    },
  };

  const port: EnrolmentPort = {
    async keyFor(challenge) {
      // A store failure is marked as such (the routes answer it 503, anything else 500).
      const resumed = await fromStore(undefined, () => deps.challenges.resume(challenge));
      if (resumed === null || resumed.purpose !== 'enrolment') return null;
      const { user } = resumed;
      const factors = await fromStore(undefined, () => secondFactorsOf(deps.factors, user.id));
      if (factors.totp || factors.passkeys > 0) return null;
      const secret = enrolmentSecret(deps.box, challenge);
      return { secret, ...enrolmentOf(secret, deps.issuer, user.email) };
    },
  };

  return { check, port };
}
