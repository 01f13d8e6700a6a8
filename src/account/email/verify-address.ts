import * as z from 'zod/mini';
import { HttpError, invalidField } from '../../http/errors.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import { passwordRawMaxLength } from '../../users/password.js';
import { answer, type AnonymousAction } from '../action.js';
import { attempt, rateLimited, refuseSecret, right, wrong, type Admitted } from '../attempts.js';
import { confirmEmail, type ConfirmRequest } from './confirmation.js';
import { displayName } from '../display-name.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { acceptableNewPassword, hashNewPassword } from '../model/chosen-password.js';
import { completeSignup, findPendingSignup, type PendingSignup } from './signup-confirmation.js';

const fields = z.object({
  token: z.optional(boundedString(256)),
  email: z.optional(boundedString(emailRawMaxLength)),
  code: z.optional(boundedString(64)),
  password: z.optional(boundedString(passwordRawMaxLength)),
  name: z.optional(boundedString(800)),
});

/** The refusal when the new address of an address change belongs to another account by now. */
export const addressTakenMessage =
  'That address belongs to another account now, so your address was not changed.';

/** The refusal when a sign-up's secret comes without the account's password. */
export const signupPasswordMissingMessage =
  'This link or code confirms a sign-up: send password, the password the account will have.';

/**
 * The name sent with a sign-up's confirmation: null when left blank (the name given at sign-up
 * stays), else a display name as sign-up reads it.
 */
function readSignupName(raw: string): string | null {
  if (raw.trim() === '') return null;
  const read = displayName.safeParse(raw);
  if (!read.success)
    throw invalidField('name', 'A name is 1 to 200 characters, none of them a control character.');
  return read.data;
}

/**
 * Confirms an address from a mail: a `verify` or `email_change` secret (link token, or the
 * address the mail went to and its code), or a sign-up's, which also needs `password`, the
 * password the account will have, chosen by whoever holds the mail (the secret came through the
 * mailbox: that is the proof), and then creates the account (src/account/email/
 * signup-confirmation.ts). So every sign-up mail serves the mailbox's owner, whoever asked for
 * it: a stranger's sign-ups cannot use up what the owner needs to finish their own. What it
 * did, or an HttpError: 400 `invalid_token` (unknown, used, expired or voided: one answer; also
 * when the new address was taken meanwhile, with its own message), 422 `invalid_field` (a
 * sign-up's secret without a password), 422 `weak_password`, 403 `signup_closed` (a sign-up's
 * secret while SIGNUP=closed), 429 past a limit. A code is charged to the sign-in throttle per account and
 * address first, as the reset's code is; a correct one takes its failure charges back. A code
 * with a password is tried as a sign-up's first.
 */
/** What a confirmation did, and for which address (its page names it). */
export interface Confirmed {
  outcome: 'verified' | 'changed' | 'created';
  email: string;
}

export const confirmEmailRequest: AnonymousAction<Confirmed> = async (deps, input) => {
  const typed = fieldsOf(fields, input.body);
  const mail = deps.mail;
  if (mail === undefined) throw new HttpError('not_found');
  const ip = input.client.ip;
  const now = deps.now();
  let secret: ConfirmRequest['secret'];
  let admitted: Admitted | undefined;
  let pending: PendingSignup | null = null;
  let codeEmail = '';
  const refuse = () => refuseSecret(deps.throttle, deps.now(), { ip });
  if (typed.token !== undefined && typed.token !== '') {
    secret = { token: typed.token };
    pending = await findPendingSignup(deps.db, secret, now);
  } else if (typed.email !== undefined && typed.code !== undefined) {
    const email = readEmail(typed.email);
    if (email === null) return refuse();
    const admission = await deps.throttle.admit(email, ip, now);
    if (!admission.admitted) throw rateLimited(admission.retryAfterSeconds);
    admitted = admission;
    codeEmail = email;
    secret = { email, code: typed.code };
    // Sign-up codes are tried only with a password: without one they could not be used.
    if (typed.password !== undefined) pending = await findPendingSignup(deps.db, secret, now);
  } else {
    throw new HttpError('invalid_field', {}, 'Send token, or email and code.');
  }
  if (pending !== null) {
    if (!deps.signupOpen) throw new HttpError('signup_closed');
    if (typed.password === undefined || typed.password === '')
      throw invalidField('password', signupPasswordMissingMessage);
    const normalised = await acceptableNewPassword(typed.password, deps.passwordMinLength);
    // A right code takes its failure charges back, as a right reset code does.
    if (admitted !== undefined)
      await deps.throttle.succeeded(admitted.keys, admitted.pastEmailLock);
    const passwordHash = await hashNewPassword(deps.hasher, normalised);
    // The name typed here, else the one given at sign-up (which the person may change later).
    const name = (typed.name === undefined ? null : readSignupName(typed.name)) ?? pending.name;
    const created = await completeSignup(
      deps.db,
      { ...pending, name, passwordHash },
      {
        now: deps.now(),
        event: input.client,
      },
    );
    // Used or voided between the check and the use (another confirmation, an account made).
    if (created === null) throw new HttpError('invalid_token');
    return answer({ outcome: 'created', email: created.email });
  }
  const sessionId = await input.requestSessionId();
  const confirm = () =>
    confirmEmail(deps.db, mail, {
      secret,
      sessionId,
      links: {
        origin: input.client.origin,
        pages: input.client.pages,
        ttlSeconds: deps.mailTokenTtlSeconds,
        now: deps.now(),
      },
      event: input.client,
    });
  let done: Awaited<ReturnType<typeof confirm>>;
  if (admitted === undefined) {
    done = await confirm();
    if (done === null) return refuse();
  } else {
    const scope = { email: codeEmail, ip, admitted };
    done = await attempt(deps.throttle, now, scope, async () => {
      const confirmed = await confirm();
      return confirmed === null ? wrong : right(confirmed);
    });
    // A wrong code's attempt stays charged to the account and the address.
    if (done === null) throw new HttpError('invalid_token');
  }
  if (done.outcome === 'taken')
    throw new HttpError('invalid_token', {}, addressTakenMessage, { reason: 'address_taken' });
  return answer({ outcome: done.outcome, email: done.email });
};

/**
 * `POST /api/account/email/verify` {token | email+code, password?}: 200 `{"status":"verified"}`
 * for a verification, an address change and a sign-up's confirmation alike (the accounts spec's
 * answer; after a sign-up's, the account exists and signs in with its password: no session is
 * made here); anyone may call it, signed in or not (the mail may be opened on another device).
 */
export const verifyEmail: AnonymousAction = async (deps, input) => {
  await confirmEmailRequest(deps, input);
  return answer({ status: 'verified' });
};
