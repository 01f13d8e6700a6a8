import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { MailQueue } from '../mail/mail-queue.js';
import { forgotPagePath } from '../pages/reset-pages.js';
import { issueVerificationMail } from './email-verification.js';
import { record, type NewAccountEvent } from './events.js';
import type { SecretLinks } from './secret-mail.js';

export interface SignUp {
  /** Normalised. */
  email: string;
  name: string;
  passwordHash: string;
  links: SecretLinks;
  event: Omit<NewAccountEvent, 'userId' | 'type'>;
}

/** What became of a sign-up (for the log: the answer never says). */
export type SignUpOutcome = 'created' | 'exists' | 'disabled';

/**
 * A sign-up's work, done after the answer: a new address becomes an unverified account, and its
 * "confirm your address" secret and mail, and its `account_created` event, are written in the
 * same transaction (an account never exists without its mail). The address's unique index
 * decides a race: the insert that loses does nothing, and the address is then treated as taken.
 * A taken address gets "you already have an account" (with a link to the forgot page) and
 * nothing changes; a disabled one gets no mail, as forgot-password sends it none.
 */
export async function signUp(
  db: Kysely<Database>,
  mail: MailQueue,
  signup: SignUp,
): Promise<SignUpOutcome> {
  const at = signup.links.now;
  const created = await db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('users')
      .values({
        id: randomUUID(),
        email: signup.email,
        name: signup.name,
        password_hash: signup.passwordHash,
        disabled: 0,
        email_verified_at: null,
        created_at: at,
        updated_at: at,
      })
      .onConflict((conflict) => conflict.column('email').doNothing())
      .returning(['id', 'email', 'name', 'credential_version'])
      .executeTakeFirst();
    if (row === undefined) return false;
    const account = { ...row, credentialVersion: Number(row.credential_version) };
    await issueVerificationMail(trx, mail, account, signup.links);
    await record(trx, {
      ...signup.event,
      userId: row.id,
      type: 'account_created',
      detail: { via: 'signup' },
    });
    return true;
  });
  if (created) return 'created';
  const existing = await db
    .selectFrom('users')
    .select(['name', 'disabled'])
    .where('email', '=', signup.email)
    .executeTakeFirst();
  // Removed meanwhile, or disabled: nothing to say to the address.
  if (existing === undefined || Number(existing.disabled) === 1) return 'disabled';
  await mail.enqueue(db, {
    kind: 'account-exists',
    to: signup.email,
    values: {
      ...(existing.name !== '' && { name: existing.name }),
      link: `${signup.links.origin}${forgotPagePath}`,
    },
  });
  return 'exists';
}

/**
 * The start-up warning for SIGNUP=open without REQUIRE_VERIFIED_EMAIL: such an account signs in
 * before anyone proved the address is theirs, so anyone can hold an account under another
 * person's address, and an app that trusts the session's `email` trusts an unproven one. A
 * warning, not a refusal: a deployment that shows `emailVerified` (GET /api/account) or does not
 * key anything on the address may want exactly this.
 */
export function signupStartupWarning(settings: {
  signupOpen: boolean;
  requireVerifiedEmail: boolean;
}): string | undefined {
  if (!settings.signupOpen || settings.requireVerifiedEmail) return undefined;
  return 'SIGNUP=open without REQUIRE_VERIFIED_EMAIL=true: accounts made by sign-up sign in before their address is confirmed, so anyone can sign up with an address that is not theirs; set REQUIRE_VERIFIED_EMAIL=true unless the apps you serve check emailVerified themselves';
}
