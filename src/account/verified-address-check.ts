import type { Kysely } from 'kysely';
import type { SignInCheck } from '../auth/signin/authorize.js';
import type { Database } from '../db/schema.js';
import { HttpError } from '../http/errors.js';
import type { MailQueue } from '../mail/mail-queue.js';
import type { User } from '../users/store.js';
import { issueVerificationMail } from './email/verification-mail.js';
import type { MailRequestLimiter } from './mail-limits.js';
import { isVerified } from './model/addresses.js';
import type { PagePaths } from './paths.js';

export interface UnverifiedSignInDeps {
  db: Kysely<Database>;
  /** The outbox, when mail is on (src/account/wing.ts decides); else the refusal stands, unmailed. */
  mail: MailQueue | undefined;
  mailRequests: MailRequestLimiter;
  mailTokenTtlSeconds: number;
  /** Where the pages live: the mail's link. */
  pages: PagePaths;
  now: () => number;
  log: { error(fields: object, message: string): void };
}

/**
 * REQUIRE_VERIFIED_EMAIL's check after the password (the first of the sign-in checks): an
 * unverified address is refused with `email_unverified`, and a fresh "confirm your address" mail
 * is queued. Such a person has no session to ask for one with, so the refusal is their way to
 * get it. It is charged to a mail counter of the account's own, at the per-address limit of
 * "forgot password" (past it no mail is queued, and the refusal is the same), so signing in again
 * and again cannot flood a mailbox, while nobody who lacks the password can use up the account's
 * mails with "forgot" requests.
 */
export function createVerifiedAddressCheck(deps: UnverifiedSignInDeps): SignInCheck {
  const { mail } = deps;
  async function queue(user: User, origin: string): Promise<void> {
    if (mail === undefined) return;
    try {
      await deps.mailRequests.chargeAccount(user.id);
    } catch (error) {
      // Past the mail limits: a recent mail is on its way already.
      if (error instanceof HttpError && error.code === 'rate_limited') return;
      throw error;
    }
    const links = {
      origin,
      pages: deps.pages,
      ttlSeconds: deps.mailTokenTtlSeconds,
      now: deps.now(),
    };
    await deps.db.transaction().execute((trx) => issueVerificationMail(trx, mail, user, links));
  }
  return {
    name: 'verified_address',
    async check(user, attempt) {
      if (await isVerified(deps.db, user.id)) return { ok: true };
      queue(user, attempt.origin).catch((error: unknown) => {
        deps.log.error({ err: error }, 'sign-in: could not queue a verification mail');
      });
      return { ok: false, code: 'email_unverified' };
    },
  };
}
