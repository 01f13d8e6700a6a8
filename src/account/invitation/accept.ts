import * as z from 'zod/mini';
import { passwordRawMaxLength } from '../../users/password.js';
import { acceptableNewPassword, hashNewPassword } from '../model/chosen-password.js';
import { answer, type AnonymousAction } from '../action.js';
import { refuseSecret } from '../attempts.js';
import { acceptInvitation, findLiveInvitation } from './invitations.js';
import { boundedString, fieldsOf } from '../request-body.js';
import { nameMaxLength } from '../display-name.js';

// Control characters (Unicode category Cc) would break the pages and mails a name is printed in.
const controlCharacter = /\p{Cc}/u;

const fields = z.object({
  token: boundedString(256),
  password: boundedString(passwordRawMaxLength),
  // Optional; a form's empty field means "keep the invitation's". Bounded before NFC and trim.
  name: z.optional(
    z
      .pipe(
        boundedString(nameMaxLength * 4),
        z.transform((raw) => raw.normalize('NFC').trim()),
      )
      .check(z.refine((name) => name.length <= nameMaxLength && !controlCharacter.test(name))),
  ),
});

/**
 * `POST /api/account/invitation/accept` {token, password, name?} (anyone): 200
 * `{"status":"accepted"}`. The password is checked first (422 `weak_password` keeps the
 * invitation), then the link must look live before any hashing (junk costs no argon2 work),
 * then one transaction uses it and creates the account, its address verified. No session is
 * created: the person signs in next. Unknown, used, expired or replaced links, and an address
 * an account took meanwhile: 400 `invalid_token`, one answer, counted as a failed attempt from
 * the address (429 past the limit). It works with mail off: `--print-link` needs no mail.
 */
export const acceptInvitationAction: AnonymousAction = async (deps, { client, body }) => {
  const input = fieldsOf(fields, body);
  const name = input.name === undefined || input.name === '' ? undefined : input.name;
  const normalised = await acceptableNewPassword(input.password, deps.passwordMinLength);
  if ((await findLiveInvitation(deps.db, input.token, deps.now())) === null)
    return refuseSecret(deps.throttle, deps.now(), { ip: client.ip });

  const passwordHash = await hashNewPassword(deps.hasher, normalised);
  const done = await acceptInvitation(deps.db, {
    token: input.token,
    passwordHash,
    name,
    now: deps.now(),
    event: client,
  });
  if (done === null) return refuseSecret(deps.throttle, deps.now(), { ip: client.ip });
  return answer({ status: 'accepted' });
};
