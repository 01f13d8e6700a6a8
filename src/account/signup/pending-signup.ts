import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import { accountHolding } from '../model/addresses.js';
import { queueSecretMail, type SecretLinks } from '../model/secret-mail.js';

export interface SignUp {
  /** Normalised. */
  email: string;
  name: string;
  passwordHash: string;
  links: SecretLinks;
}

/** What became of a sign-up (for the log: the answer never says). */
export type SignUpOutcome = 'pending' | 'exists' | 'disabled' | 'over_budget';

/**
 * A sign-up's work, done after the answer. It makes no account: an address without one gets a
 * userless `signup` secret that keeps the name typed (and the hash of the password sent, which
 * passed the policy) and the "confirm your address" mail, in one transaction. The account is
 * made only when that secret comes back through the mailbox, with the password its holder
 * chooses then (src/account/email/verify-address.ts), so signing in before then answers as for any
 * wrong password, the password a stranger typed is nobody's, every sign-up mail serves the
 * owner of the address, and a sign-up nobody confirms expires with its secret. The mail carries
 * no name: the requester typed it, and nobody has proven the address. Earlier pending sign-ups
 * of the address stay; once an account has the address, every one of them is void (the
 * userless claim). A taken address gets "you already have an account", greeting its holder by
 * the account's own name, and nothing changes; a disabled one gets no mail, as forgot-password
 * sends it none.
 */
export async function signUp(
  db: Kysely<Database>,
  mail: MailQueue,
  signup: SignUp,
  /** Charges the mail about to be sent; false: the address has had its share (nothing sent). */
  chargeSent: () => Promise<boolean>,
): Promise<SignUpOutcome> {
  const existing = await accountHolding(db, signup.email);
  if (existing?.disabled === true) return 'disabled';
  if (!(await chargeSent())) return 'over_budget';
  if (existing === null) {
    // An account made between this read and the secret's use voids the secret (its claim).
    await db.transaction().execute(async (trx) => {
      await queueSecretMail(trx, mail, {
        secret: {
          purpose: 'signup',
          userId: null,
          email: signup.email,
          credentialVersion: null,
          name: signup.name,
          passwordHash: signup.passwordHash,
        },
        kind: 'signup-confirmation',
        to: signup.email,
        name: '',
        pagePath: signup.links.pages.signupConfirm,
        links: signup.links,
      });
    });
    return 'pending';
  }
  await mail.enqueue(db, {
    kind: 'account-exists',
    to: signup.email,
    values: {
      ...(existing.name !== '' && { name: existing.name }),
      link: `${signup.links.origin}${signup.links.pages.forgot}`,
    },
  });
  return 'exists';
}
