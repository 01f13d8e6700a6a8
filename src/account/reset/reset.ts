import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import { passwordRawMaxLength } from '../../users/password.js';
import { acceptableNewPassword, hashNewPassword } from '../model/chosen-password.js';
import { answer, type AnonymousAction } from '../action.js';
import { attempt, refuseSecret, right, wrong } from '../attempts.js';
import { resetPassword } from './reset-transaction.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { findLive, matchCode, type ConsumeRequest } from '../model/secrets.js';
import { requireSecondFactor } from '../totp/second-factor-proof.js';
import { anyFactor, factorsYoungerThan } from './young-factors.js';

const fields = z.object({
  token: z.optional(boundedString(256)),
  email: z.optional(boundedString(emailRawMaxLength)),
  code: z.optional(boundedString(64)),
  password: boundedString(passwordRawMaxLength),
  otp: z.optional(boundedString(64)),
  recoveryCode: z.optional(boundedString(64)),
});

/**
 * `POST /api/account/password/reset` {token | email+code, password}: 200
 * `{"status":"password_changed"}`. The new password is checked first (422 `weak_password`
 * keeps the secret), then the secret: a link token must look live before any hashing (so junk
 * tokens cost no argon2 work), a code is charged to the sign-in throttle per account and
 * address first. The reset ends every session and signs nobody in; the account's sign-in lock
 * is lifted, as an operator's set-password lifts it (the mailbox holder proved themselves).
 * Unknown, used, expired or voided secrets: 400 `invalid_token`, one answer; 429 past a limit.
 * A reset never lowers an account's assurance: once the secret is known good, an account with
 * a second factor must send `otp` or `recoveryCode` too (401 `second_factor_required`, 403
 * `second_factor_invalid`), and the secret is kept until it does, unless every factor it has
 * was added after the reset was asked for: then none is asked, and the reset removes them.
 */
export const resetPasswordAction: AnonymousAction = async (deps, { client, body }) => {
  const input = fieldsOf(fields, body);
  const mail = deps.mail;
  if (mail === undefined) throw new HttpError('not_found');
  const ip = client.ip;
  const refuse = () => refuseSecret(deps.throttle, deps.now(), { ip });
  let secret: ConsumeRequest;
  let codeEmail: string | null = null;
  if (input.token !== undefined && input.token !== '') {
    secret = { purpose: 'reset', token: input.token };
  } else if (input.email !== undefined && input.code !== undefined) {
    codeEmail = readEmail(input.email);
    if (codeEmail === null) return refuse();
    secret = { purpose: 'reset', email: codeEmail, code: input.code };
  } else {
    throw new HttpError('invalid_field', {}, 'Send token, or email and code.');
  }

  const normalised = await acceptableNewPassword(input.password, deps.passwordMinLength);
  // Asked only of a secret known good, so only its holder learns the account has a factor.
  // True: every factor the account has was added after the reset was asked for, so none is
  // asked and the reset removes them (src/account/reset/young-factors.ts).
  const secondFactorOf = async (email: string, requestedAt: number): Promise<boolean> => {
    const user = await deps.users.findByEmail(email);
    if (user === null) return false;
    const young = await factorsYoungerThan(deps.db, user.id, requestedAt);
    if (young !== null && anyFactor(young)) return true;
    await requireSecondFactor(deps.secondStep, user, body, { ...client, knownDevice: false });
    return false;
  };
  const reset = async (dropYoungFactors: boolean) =>
    resetPassword(deps.db, mail, {
      dropYoungFactors,
      secret,
      newHash: await hashNewPassword(deps.hasher, normalised),
      links: {
        origin: client.origin,
        pages: client.pages,
        ttlSeconds: deps.mailTokenTtlSeconds,
        now: deps.now(),
      },
      event: client,
    });

  let done: Awaited<ReturnType<typeof reset>>;
  if (codeEmail !== null) {
    // A code is a guess at a short secret: charged to the account and the address first.
    const email = codeEmail;
    done = await attempt(deps.throttle, deps.now(), { email, ip }, async () => {
      // A try of the code is spent here, and one more when the reset uses it.
      const match = await matchCode(
        deps.db,
        { purpose: 'reset', email, code: input.code ?? '' },
        deps.now(),
      );
      if (match === null) return wrong;
      const changed = await reset(await secondFactorOf(match.email, match.createdAt));
      return changed === null ? wrong : right(changed);
    });
    // The wrong code's attempt stays charged to the account and the address.
    if (done === null) throw new HttpError('invalid_token');
  } else {
    // A link must look live before any hashing, so junk tokens cost no argon2 work.
    const live =
      'token' in secret ? await findLive(deps.db, 'reset', secret.token, deps.now()) : null;
    if (live === null) return refuse();
    done = await reset(await secondFactorOf(live.email, live.createdAt));
    if (done === null) return refuse();
  }
  await deps.throttle.unlockEmail(done.email);
  return answer({ status: 'password_changed' });
};
