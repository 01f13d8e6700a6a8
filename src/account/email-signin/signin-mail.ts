import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { authBasePath } from '../../auth/bridge/auth-config.js';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { UserStore } from '../../users/store.js';
import type { MailRequestLimiter } from '../mail-limits.js';
import { expiresIn } from '../model/secret-mail.js';
import { issue } from '../model/secrets.js';

/*
 * The mail a sign-in by e-mail sends, written after the request's answer (./ask-mail.ts), so
 * nothing here shows in that answer's bytes or time: the address's lookup, the secret and its
 * mail in the outbox, in one transaction. What goes depends on the address:
 * - an enabled account: a link and a code (`email_signin`, bound to the account as it is now);
 * - no account, SIGNUP=open: the same, userless: the account is made when it comes back;
 * - no account, SIGNUP=closed: a mail saying no account was found (no secret);
 * - a disabled account: nothing (as forgot-password sends it nothing).
 * Each mail is charged to the address's sent budget first; past it nothing is sent.
 */

/** The sign-in's link: Auth.js's e-mail callback, whose GET only shows a button. */
export const mailedLinkPath = `${authBasePath}/callback/email`;

/**
 * What a code is bound to: the browser that asked, by Auth.js's CSRF token, whose cookie is
 * HttpOnly and whose pair only the service can make, so no other browser holds it. Its digest
 * (never the token) goes into the code's (src/account/model/secrets.ts): the code then
 * matches only where that browser posts it back.
 */
export const browserOf = (csrfToken: string) =>
  createHash('sha256').update(`gatehouse email sign-in browser\n${csrfToken}`).digest('base64url');

export interface SignInMailPorts {
  db: Kysely<Database>;
  mail: MailQueue;
  users: Pick<UserStore, 'findByEmail'>;
  mailRequests: Pick<MailRequestLimiter, 'chargeSent'>;
  /** How long a link and code live (./email-signin-way-in.ts). */
  ttlSeconds: number;
  /** SIGNUP=open: an address without an account gets a link that makes one. */
  signupOpen: boolean;
}

/** One request for the mail, as its answer took it. */
export interface SignInMailRequest {
  /** Normalised. */
  email: string;
  /** browserOf the asking browser's CSRF token. */
  browser: string;
  /** Where the link's sign-in lands (settled at the request). */
  callbackUrl: string;
  /** The public origin links are built on. */
  origin: string;
  at: number;
}

/** What became of a request (for the log: the answer never says). */
export type SignInMailOutcome = 'sent' | 'new_account' | 'no_account' | 'disabled' | 'over_budget';

export async function mailSignIn(
  ports: SignInMailPorts,
  request: SignInMailRequest,
): Promise<SignInMailOutcome> {
  const { email, at } = request;
  const user = await ports.users.findByEmail(email);
  if (user?.disabled === true) return 'disabled';
  if (!(await ports.mailRequests.chargeSent('email_signin', email))) return 'over_budget';
  if (user === null && !ports.signupOpen) {
    await ports.mail.enqueue(ports.db, { kind: 'email-signin-no-account', to: email, values: {} });
    return 'no_account';
  }
  await ports.db.transaction().execute(async (trx) => {
    // An account made or changed between this read and the secret's use voids the secret
    // (its claim, src/account/model/secrets.ts).
    const issued = await issue(
      trx,
      {
        purpose: 'email_signin',
        userId: user?.id ?? null,
        email,
        credentialVersion: user?.credentialVersion ?? null,
        ttlSeconds: ports.ttlSeconds,
        codeBoundTo: request.browser,
      },
      at,
    );
    const query = new URLSearchParams({ token: issued.token, callbackUrl: request.callbackUrl });
    await ports.mail.enqueue(trx, {
      kind: user === null ? 'email-signin-new-account' : 'email-signin',
      to: email,
      values: {
        ...(user !== null && user.name !== '' && { name: user.name }),
        link: `${request.origin}${mailedLinkPath}?${query}`,
        code: issued.code ?? '',
        ...expiresIn(ports.ttlSeconds),
      },
      expiresAt: new Date(issued.expiresAt),
    });
  });
  return user === null ? 'new_account' : 'sent';
}
