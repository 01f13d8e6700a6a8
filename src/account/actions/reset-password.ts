import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { GateFullError } from '../../traffic/work-gate.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import { normalisePassword, passwordRawMaxLength } from '../../users/password.js';
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

// The common-password list is large: loaded on the first reset, not at start-up.
const passwordPolicy = () => import('../../users/password-policy.js');

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

  const normalised = normalisePassword(input.password);
  const { checkNewPassword, passwordProblemMessages } = await passwordPolicy();
  const problem = checkNewPassword(normalised, deps.passwordMinLength);
  if (problem !== null) {
    const message = passwordProblemMessages[problem](deps.passwordMinLength);
    throw new HttpError('weak_password', {}, `${message[0]?.toUpperCase()}${message.slice(1)}.`);
  }

  let admittedKeys: Parameters<AccountDeps['throttle']['succeeded']>[0] | undefined;
  if (codeEmail !== null) {
    const admission = await deps.throttle.admit(codeEmail, ip, deps.now());
    if (!admission.admitted) throw rateLimited(admission.retryAfterSeconds);
    admittedKeys = admission.keys;
  } else if ('token' in secret && !(await resetLinkLooksLive(deps.db, secret.token, deps.now()))) {
    return refuse(deps, null, ip);
  }

  const newHash = await deps.hasher.hash(normalised).catch(async (error: unknown) => {
    if (admittedKeys !== undefined) await deps.throttle.notChecked(admittedKeys);
    // The hasher's queue is full: shed as sign-in does, with nothing changed.
    if (error instanceof GateFullError) throw new HttpError('overloaded', { 'retry-after': '1' });
    throw error;
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
