import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import { answer, type AnonymousAction } from '../action.js';
import { refuseSecret } from '../attempts.js';
import { lockAccount } from './lock-transaction.js';
import { boundedString, fieldsOf } from '../request-body.js';

const fields = z.object({ token: boundedString(256) });

/**
 * `POST /api/account/lock` {token}: 200 `{"status":"locked"}`. The token comes from a security
 * notice's "this wasn't me" link; the account is disabled and every session ends, until an
 * operator runs `gatehouse users enable`. Unknown, used or expired tokens: 400 `invalid_token`,
 * one answer, counted as a failed attempt from the client's address (429 past the limit), as
 * the reset link is.
 */
export const lockAccountAction: AnonymousAction = async (deps, { client, body }) => {
  const input = fieldsOf(fields, body);
  if (deps.mail === undefined) throw new HttpError('not_found');
  const done = await lockAccount(deps.db, {
    token: input.token,
    now: deps.now(),
    event: client,
    mail: deps.mail,
  });
  if (done === null) return refuseSecret(deps.throttle, deps.now(), { ip: client.ip });
  return answer({ status: 'locked' });
};
