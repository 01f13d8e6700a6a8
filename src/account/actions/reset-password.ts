import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import { passwordRawMaxLength } from '../../users/password.js';
import { acceptableNewPassword, hashNewPassword } from '../new-password.js';
import { clientOf, type AccountDeps, type AnonymousAction } from '../action.js';
import { resetLinkLooksLive, resetPassword } from '../password-reset.js';
import { boundedString, fieldsOf } from '../request-body.js';
import type { ConsumeRequest } from '../tokens.js';

const fields = z.object({
  token: z.optional(boundedString(256)),
  email: z.optional(boundedString(emailRawMaxLength)),
  code: z.optional(boundedString(64)),
  password: boundedString(passwordRawMaxLength),
});

const rateLimited = (seconds: number) =>
  new HttpError('rate_limited', { 'retry-after': String(seconds) });

/** A wrong secret counts as a failed attempt from the address (and the account, for a code). */
async function refuse(deps: AccountDeps, email: string | null, ip: string): Promise<never> {
  const retryAfter = await deps.throttle.refused(email, ip, deps.now());
  if (retryAfter !== null) throw rateLimited(retryAfter);
  throw new HttpError('invalid_token');
}

/**
 * `POST /api/account/password/reset` {token | email+code, password}: 200
 * `{"status":"password_changed"}`. The new password is checked first (422 `weak_password`
 * keeps the secret), then the secret: a link token must look live before any hashing (so junk
 * tokens cost no argon2 work), a code is charged to the sign-in throttle per account and
 * address first. The reset ends every session and signs nobody in; the account's sign-in lock
 * is lifted, as an operator's set-password lifts it (the mailbox holder proved themselves).
 * Unknown, used, expired or voided secrets: 400 `invalid_token`, one answer; 429 past a limit.
 */
export const resetPasswordAction: AnonymousAction = async (deps, { request, body }) => {
  const input = fieldsOf(fields, body);
  if (deps.mail === undefined) throw new HttpError('not_found');
  const ip = request.ip;
  let secret: ConsumeRequest;
  let codeEmail: string | null = null;
  if (input.token !== undefined && input.token !== '') {
    secret = { purpose: 'reset', token: input.token };
  } else if (input.email !== undefined && input.code !== undefined) {
    codeEmail = readEmail(input.email);
    if (codeEmail === null) return refuse(deps, null, ip);
    secret = { purpose: 'reset', email: codeEmail, code: input.code };
  } else {
    throw new HttpError('invalid_field', {}, 'Send token, or email and code.');
  }

  const normalised = await acceptableNewPassword(input.password, deps.passwordMinLength);

  let admittedKeys: Parameters<AccountDeps['throttle']['succeeded']>[0] | undefined;
  if (codeEmail !== null) {
    const admission = await deps.throttle.admit(codeEmail, ip, deps.now());
    if (!admission.admitted) throw rateLimited(admission.retryAfterSeconds);
    admittedKeys = admission.keys;
  } else if ('token' in secret && !(await resetLinkLooksLive(deps.db, secret.token, deps.now()))) {
    return refuse(deps, null, ip);
  }

  const newHash = await hashNewPassword(deps.hasher, normalised, async () => {
    if (admittedKeys !== undefined) await deps.throttle.notChecked(admittedKeys);
  });
  const done = await resetPassword(deps.db, deps.mail, {
    secret,
    newHash,
    links: {
      origin: deps.originOf(request),
      ttlSeconds: deps.mailTokenTtlSeconds,
      now: deps.now(),
    },
    event: clientOf(request),
  });
  if (done === null) {
    // A code's attempt is already charged to the account and the address: it stays charged.
    if (admittedKeys !== undefined) throw new HttpError('invalid_token');
    return refuse(deps, null, ip);
  }
  await deps.throttle.unlockEmail(done.email);
  return { status: 'password_changed' };
};
