import * as z from 'zod/mini';
import { HttpError, invalidField } from '../../http/errors.js';
import { emailRawMaxLength, readEmail } from '../../users/email.js';
import type { FormFailure } from '../../pages/account/account-notices.js';
import type { AccountAction } from '../action.js';
import { issueEmailChangeMail } from './confirmation.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { overBudget, overBudgetMessage } from '../mail-limits.js';

const fields = z.object({ email: boundedString(emailRawMaxLength) });

/**
 * `POST /api/account/email/change` {email} (recent): 202 `{"status":"accepted"}`. Refused before
 * anything else: an address that cannot be one, or the account's own (422 `invalid_field`), then
 * the mail request limits per new address and client (429). Whether the new address belongs to
 * another account is looked up only after the answer has been written, so the answer is the
 * same in status, bytes and time: a free address gets the `email_change` link, a taken one gets
 * nothing (its owner did not ask for anything). Failures after the answer are logged. The address
 * changes only when the link (or code) from the new address's mail is used.
 */
export const changeEmail: AccountAction = async (deps, { client, signedIn, body }) => {
  const email = readEmail(fieldsOf(fields, body).email);
  if (email === null) throw invalidField('email');
  const mail = deps.mail;
  if (mail === undefined) throw new HttpError('not_found');
  const { user } = signedIn;
  if (email === user.email)
    throw invalidField('email', 'That is already the address of your account.', 'same_address');
  await deps.mailRequests.charge('email_change', email, client.ip);
  const links = {
    origin: client.origin,
    pages: client.pages,
    ttlSeconds: deps.mailTokenTtlSeconds,
    now: deps.now(),
  };
  const account = {
    id: user.id,
    email: user.email,
    name: user.name,
    credentialVersion: user.credentialVersion,
  };
  const work = async () => {
    if ((await deps.users.findByEmail(email)) !== null) return;
    if (!(await deps.mailRequests.chargeSent('email_change', email))) {
      deps.log.warn(overBudget('email_change'), overBudgetMessage);
      return;
    }
    await issueEmailChangeMail(deps.db, mail, account, email, links);
  };
  return {
    body: { status: 'accepted' },
    afterAnswer: { failure: 'address change: could not queue the mail', run: work },
  };
};

/** The new address must read as one before the password is checked (and counted). */
export const plausibleNewEmail = (body: Record<string, unknown>): FormFailure | undefined =>
  typeof body.email === 'string' && readEmail(body.email) !== null
    ? undefined
    : { code: 'invalid_field', message: 'Field email is missing or not valid.', field: 'email' };
