import * as z from 'zod/mini';
import { HttpError, invalidField } from '../../http/errors.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import type { AnonymousAction } from '../action.js';
import { issueResetMail } from './reset-transaction.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { overBudget, overBudgetMessage } from '../mail-limits.js';

const fields = z.object({ email: boundedString(emailRawMaxLength) });

/**
 * `POST /api/account/password/forgot` {email}: always 202 `{"status":"accepted"}`, the same
 * bytes whether the address has an account, a disabled one or none, and whatever SMTP does.
 * Before the answer only what is the same for every address runs: reading the field and the
 * per-address and per-e-mail limits (one upsert each, 429 past them). Everything that depends
 * on the account (the user's lookup, the secret, the mail in the outbox) runs after the answer
 * has been written, so its time cannot show in the answer's; its failures are logged. A
 * disabled account gets no mail: it cannot use a new password, and an operator (or the lock
 * flow) disabled it on purpose.
 */
export const forgotPassword: AnonymousAction = async (deps, { client, body }) => {
  const typed = fieldsOf(fields, body).email;
  const email = readEmail(typed);
  if (email === null) throw invalidField('email');
  const mail = deps.mail;
  if (mail === undefined) throw new HttpError('not_found');
  await deps.mailRequests.charge('reset', email, client.ip);
  const origin = client.origin;
  const now = deps.now();
  const work = async () => {
    const user = await deps.users.findByEmail(email);
    if (user === null || user.disabled) return;
    if (!(await deps.mailRequests.chargeSent('reset', email))) {
      deps.log.warn(overBudget('reset'), overBudgetMessage);
      return;
    }
    await issueResetMail(deps.db, mail, user, {
      origin,
      pages: client.pages,
      ttlSeconds: deps.mailTokenTtlSeconds,
      now,
    });
  };
  return {
    body: { status: 'accepted' },
    afterAnswer: { failure: 'password reset: could not queue the mail', run: work },
  };
};
