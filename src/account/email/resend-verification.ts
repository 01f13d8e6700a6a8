import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { issueVerificationMail } from './verification-mail.js';

/**
 * `POST /api/account/email/verification` (session): 202. Charged first to a mail counter of the
 * account's own (429 with Retry-After past it), so a session cannot flood a mailbox, and nobody
 * else's requests for the address (sign-ups, address changes) can use it up. An address not yet verified gets a new `verify` secret and its mail
 * (`{"status":"accepted"}`); an address already verified gets no mail, and the answer says so
 * (`{"status":"already_verified"}`): the signed-in user may read that from `GET /api/account`
 * anyway, so it tells nobody anything new. Earlier mails stay valid until they expire.
 */
export const resendVerification: AccountAction = async (deps, { client, signedIn }) => {
  const mail = deps.mail;
  if (mail === undefined) throw new HttpError('not_found');
  const { user } = signedIn;
  await deps.mailRequests.chargeAccount(user.id);
  const view = await deps.store.view(user.id);
  if (view === null) throw new HttpError('unauthenticated');
  if (view.emailVerified) return answer({ status: 'already_verified' });
  const links = {
    origin: client.origin,
    pages: client.pages,
    ttlSeconds: deps.mailTokenTtlSeconds,
    now: deps.now(),
  };
  await deps.db.transaction().execute((trx) =>
    issueVerificationMail(
      trx,
      mail,
      {
        id: user.id,
        email: user.email,
        name: user.name,
        credentialVersion: user.credentialVersion,
      },
      links,
    ),
  );
  return answer({ status: 'accepted' });
};
