import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import { passwordRawMaxLength } from '../../users/password.js';
import { acceptableNewPassword, hashNewPassword } from '../model/chosen-password.js';
import { answer, type AnonymousAction } from '../action.js';
import { attempt, refuseSecret, right, wrong } from '../attempts.js';
import { resetLinkLooksLive, resetPassword } from './reset-transaction.js';
import { boundedString, fieldsOf } from '../request-body.js';
import type { ConsumeRequest } from '../model/secrets.js';

const fields = z.object({
  token: z.optional(boundedString(256)),
  email: z.optional(boundedString(emailRawMaxLength)),
  code: z.optional(boundedString(64)),
  password: boundedString(passwordRawMaxLength),
});

/**
 * `POST /api/account/password/reset` {token | email+code, password}: 200
 * `{"status":"password_changed"}`. The new password is checked first (422 `weak_password`
 * keeps the secret), then the secret: a link token must look live before any hashing (so junk
 * tokens cost no argon2 work), a code is charged to the sign-in throttle per account and
 * address first. The reset ends every session and signs nobody in; the account's sign-in lock
 * is lifted, as an operator's set-password lifts it (the mailbox holder proved themselves).
 * Unknown, used, expired or voided secrets: 400 `invalid_token`, one answer; 429 past a limit.
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
  const reset = async () =>
    resetPassword(deps.db, mail, {
      secret,
      newHash: await hashNewPassword(deps.hasher, normalised),
      links: {
        origin: client.origin,
        ttlSeconds: deps.mailTokenTtlSeconds,
        now: deps.now(),
      },
      event: client,
    });

  let done: Awaited<ReturnType<typeof reset>>;
  if (codeEmail !== null) {
    // A code is a guess at a short secret: charged to the account and the address first.
    done = await attempt(deps.throttle, deps.now(), { email: codeEmail, ip }, async () => {
      const changed = await reset();
      return changed === null ? wrong : right(changed);
    });
    // The wrong code's attempt stays charged to the account and the address.
    if (done === null) throw new HttpError('invalid_token');
  } else {
    // A link must look live before any hashing, so junk tokens cost no argon2 work.
    if (!('token' in secret) || !(await resetLinkLooksLive(deps.db, secret.token, deps.now())))
      return refuse();
    done = await reset();
    if (done === null) return refuse();
  }
  await deps.throttle.unlockEmail(done.email);
  return answer({ status: 'password_changed' });
};
