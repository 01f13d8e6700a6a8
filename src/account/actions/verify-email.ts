import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import { clientOf, type AccountDeps, type AnonymousAction, type ActionInput } from '../action.js';
import { confirmEmail, type ConfirmRequest } from '../email-confirmation.js';
import { boundedString, fieldsOf } from '../request-body.js';

const fields = z.object({
  token: z.optional(boundedString(256)),
  email: z.optional(boundedString(emailRawMaxLength)),
  code: z.optional(boundedString(64)),
});

/** The refusal when the new address of an address change belongs to another account by now. */
export const addressTakenMessage =
  'That address belongs to another account now, so your address was not changed.';

const rateLimited = (seconds: number) =>
  new HttpError('rate_limited', { 'retry-after': String(seconds) });

/** A wrong link counts as a failed attempt from the client's address, as a reset link does. */
async function refuse(deps: AccountDeps, ip: string): Promise<never> {
  const retryAfter = await deps.throttle.refused(null, ip, deps.now());
  if (retryAfter !== null) throw rateLimited(retryAfter);
  throw new HttpError('invalid_token');
}

/** The request's session id, if it holds one: an address change keeps that session. */
async function sessionIdOf(deps: AccountDeps, input: Omit<ActionInput, 'signedIn'>) {
  try {
    return (await deps.sessions.current(input.request))?.claims.sid ?? null;
  } catch {
    // The session could not be read: the change then ends every session, the safe side.
    return null;
  }
}

/**
 * Confirms an address from a `verify` or `email_change` mail (link token, or the address the
 * mail went to and its code): what it did, or an HttpError: 400 `invalid_token` (unknown, used,
 * expired or voided: one answer; also when the new address was taken meanwhile, with its own
 * message), 429 past a limit. A code is charged to the sign-in throttle per account and address
 * first, as the reset's code is; a correct one takes its failure charges back.
 */
export async function confirmEmailRequest(
  deps: AccountDeps,
  input: Omit<ActionInput, 'signedIn'>,
): Promise<{ outcome: 'verified' | 'changed'; email: string }> {
  const typed = fieldsOf(fields, input.body);
  const mail = deps.mail;
  if (mail === undefined) throw new HttpError('not_found');
  const ip = input.request.ip;
  let secret: ConfirmRequest['secret'];
  let admitted: Parameters<AccountDeps['throttle']['succeeded']>[0] | undefined;
  if (typed.token !== undefined && typed.token !== '') {
    secret = { token: typed.token };
  } else if (typed.email !== undefined && typed.code !== undefined) {
    const email = readEmail(typed.email);
    if (email === null) return refuse(deps, ip);
    const admission = await deps.throttle.admit(email, ip, deps.now());
    if (!admission.admitted) throw rateLimited(admission.retryAfterSeconds);
    admitted = admission.keys;
    secret = { email, code: typed.code };
  } else {
    throw new HttpError('invalid_field', {}, 'Send token, or email and code.');
  }
  const done = await confirmEmail(deps.db, mail, {
    secret,
    sessionId: await sessionIdOf(deps, input),
    links: {
      origin: deps.originOf(input.request),
      ttlSeconds: deps.mailTokenTtlSeconds,
      now: deps.now(),
    },
    event: clientOf(input.request),
  });
  if (done === null) {
    // A code's attempt is already charged to the account and the address: it stays charged.
    if (admitted !== undefined) throw new HttpError('invalid_token');
    return refuse(deps, ip);
  }
  if (admitted !== undefined) await deps.throttle.succeeded(admitted);
  if (done.outcome === 'taken') throw new HttpError('invalid_token', {}, addressTakenMessage);
  return { outcome: done.outcome, email: done.email };
}

/**
 * `POST /api/account/email/verify` {token | email+code}: 200 `{"status":"verified"}` for a
 * verification and for an address change alike (the accounts spec's answer); anyone may call
 * it, signed in or not (the mail may be opened on another device).
 */
export const verifyEmail: AnonymousAction = async (deps, input) => {
  await confirmEmailRequest(deps, input);
  return { status: 'verified' };
};
