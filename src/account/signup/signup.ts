import * as z from 'zod/mini';
import { HttpError, invalidField } from '../../http/errors.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import { passwordRawMaxLength } from '../../users/password.js';
import { acceptableNewPassword, hashNewPassword } from '../model/chosen-password.js';
import type { AccountDeps, AnonymousAction } from '../action.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { signUp } from './pending-signup.js';
import { displayName } from '../display-name.js';
import { overBudget, overBudgetMessage } from '../mail-limits.js';

/**
 * How long a sign-up's link lives: MAIL_TOKEN_TTL, and at least as long as a spent sent budget
 * stays spent. A stranger's sign-ups may spend the address's budget: the last link they had
 * mailed to it must still work for its owner until the budget lets another one go.
 */
export const signupLinkTtlSeconds = (deps: AccountDeps): number =>
  Math.max(deps.mailTokenTtlSeconds, deps.mailRequests.sentBudgetSpentSeconds);

const fields = z.object({
  email: boundedString(emailRawMaxLength),
  name: displayName,
  password: boundedString(passwordRawMaxLength),
});

/**
 * `POST /api/account/signup` {email, name, password}: 202 `{"status":"accepted"}`, the same
 * bytes and time for a new, a taken and a disabled address. SIGNUP=closed: 403
 * `signup_closed`. Before the answer runs only what does not depend on the address having an
 * account: the fields (422 `invalid_field`), the password policy (422 `weak_password`, as reset
 * and change), the mail request limits per client and address (429), and the argon2 hash of
 * the password (503 `overloaded` when the hasher is full: every address pays it, so nothing is
 * lost silently and no answer is faster). The address's lookup, the pending sign-up's secret and
 * the mail run after the answer has been written (src/account/signup/pending-signup.ts), so their time cannot
 * show in it. No account exists until the address is confirmed with the same password.
 */
export const signUpAction: AnonymousAction = async (deps, { client, body }) => {
  if (!deps.signupOpen) throw new HttpError('signup_closed');
  const mail = deps.mail;
  if (mail === undefined) throw new HttpError('not_found');
  const input = fieldsOf(fields, body);
  const email = readEmail(input.email);
  if (email === null) throw invalidField('email');
  const normalised = await acceptableNewPassword(input.password, deps.passwordMinLength);
  await deps.mailRequests.charge('signup', email, client.ip);
  const passwordHash = await hashNewPassword(deps.hasher, normalised);
  const work = {
    email,
    name: input.name,
    passwordHash,
    links: {
      origin: client.origin,
      pages: client.pages,
      ttlSeconds: signupLinkTtlSeconds(deps),
      now: deps.now(),
    },
  };
  return {
    body: { status: 'accepted' },
    afterAnswer: {
      failure: 'sign-up: could not queue the sign-up or its mail',
      run: async () => {
        const outcome = await signUp(deps.db, mail, work, () =>
          deps.mailRequests.chargeSent('signup', email),
        );
        if (outcome === 'over_budget') deps.log.warn(overBudget('signup'), overBudgetMessage);
      },
    },
  };
};
