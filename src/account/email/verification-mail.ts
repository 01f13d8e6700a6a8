import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import { queueSecretMail, type SecretLinks } from '../model/secret-mail.js';

/** Where a verification mail's link goes: the page whose GET consumes nothing. */

/** The account a verification mail is for, as it is when the mail is queued. */
export interface VerifiedAccount {
  id: string;
  email: string;
  name: string;
  credentialVersion: number;
}

/**
 * Queues "confirm your address" for an account, in the caller's transaction: the secret (purpose
 * `verify`, bound to the user, the address and the credential version now) and its mail are
 * written together, so one never exists without the other. The link carries the token in the
 * query (a page without script never sees a fragment); the mail also has the short code.
 */
export async function issueVerificationMail(
  trx: Kysely<Database>,
  mail: MailQueue,
  account: VerifiedAccount,
  links: SecretLinks,
): Promise<void> {
  await queueSecretMail(trx, mail, {
    secret: {
      purpose: 'verify',
      userId: account.id,
      email: account.email,
      credentialVersion: account.credentialVersion,
    },
    kind: 'email-verification',
    to: account.email,
    // The address is not proven yet (that is what this mail is for): no requester-supplied
    // text goes to it, as in the sign-up's and the address change's mails.
    name: '',
    pagePath: links.pages.verify,
    links,
  });
}
