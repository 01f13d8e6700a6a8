import type { Kysely } from 'kysely';
import type { WayIn, WireRoute } from '../../auth/way-in.js';
import type { Throttle } from '../../auth/signin/throttle.js';
import type { PageSettings } from '../../config/page-settings.js';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { UserStore } from '../../users/store.js';
import type { MailRequestLimiter } from '../mail-limits.js';
import { createPageKit } from '../page-kit.js';
import type { PacedWork } from '../paced-work.js';
import type { AccountWayIn } from '../second-factors.js';
import { createAskedAddress } from './asked-address.js';
import { askMailRoute } from './ask-mail.js';
import { emailSignInNotice } from './email-notices.js';
import { checkInboxRoute, showMailedLink } from './email-pages.js';
import { createMailProof } from './mail-proof.js';
import { mailedLinkPath, mailSignIn } from './signin-mail.js';

/*
 * Sign-in by e-mail as a way in (adoption spec §2; EMAIL_SIGNIN=on, mail on): Auth.js's e-mail
 * provider on its wire, so `signIn("email", { email })` (or the `nodemailer` id) from
 * next-auth/react works unchanged, with Gatehouse's rules for e-mailed secrets in place of
 * Auth.js's link that a GET consumes: one mail holds a link and a code; the link's GET shows a
 * button and only its post signs in, the code signs in only the browser that asked. The sign-in
 * page gains "Email me a sign-in link", and words for each refusal.
 */

export interface EmailSignInPorts {
  db: Kysely<Database>;
  users: Pick<UserStore, 'findByEmail'>;
  /** The outbox, when mail is on; without it the way in is off. */
  mail: MailQueue | undefined;
  mailRequests: MailRequestLimiter;
  throttle: Throttle;
  mailTokenTtlSeconds: number;
  /** EMAIL_SIGNIN=on. */
  emailSignIn: boolean;
  signupOpen: boolean;
  /** What the pages are made with: the CSRF pair's secrets, AUTH_URL, the branding. */
  authSecrets: readonly string[];
  publicOrigin: string | undefined;
  pageSettings: PageSettings | undefined;
  /** The account wing's queue for work after an answer (src/account/paced-work.ts). */
  afterAnswer: Pick<PacedWork, 'push'>;
  now: () => number;
  log: {
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
  };
}

/** Auth.js's e-mail providers as its provider list names them; both mail the same way. */
const providersOf = (authUrl: string) =>
  Object.fromEntries(
    (['email', 'nodemailer'] as const).map((id) => [
      id,
      {
        id,
        name: id === 'email' ? 'Email' : 'Nodemailer',
        type: 'email',
        signinUrl: `${authUrl}/signin/${id}`,
        // Where the mail's link leads, whichever id asked for it.
        callbackUrl: `${authUrl}/callback/email`,
      },
    ]),
  );

export function createEmailSignInWayIn(ports: EmailSignInPorts): AccountWayIn {
  const mail = ports.mail;
  if (!ports.emailSignIn || mail === undefined) return { wayIn: { id: 'email' } };
  // A stranger's requests may spend the address's sent budget: the links they had mailed to it
  // then serve its owner (they are not bound to a browser) until the budget lets another go.
  const ttlSeconds = Math.max(ports.mailTokenTtlSeconds, ports.mailRequests.sentBudgetSpentSeconds);
  const kit = createPageKit({
    authSecrets: ports.authSecrets,
    authUrl: ports.publicOrigin,
    page: ports.pageSettings,
  });
  const askedAddress = createAskedAddress(ports.authSecrets);
  const pages = { db: ports.db, kit, askedAddress, now: ports.now };
  const ask = {
    assertCsrf: kit.assertCsrf,
    mailRequests: ports.mailRequests,
    afterAnswer: ports.afterAnswer,
    mailSignIn: (request: Parameters<typeof mailSignIn>[1]) =>
      mailSignIn({ ...ports, mail, ttlSeconds }, request),
    ttlSeconds,
    askedAddress,
    now: ports.now,
    log: ports.log,
  };
  const proof = createMailProof(ports);
  const callback: WireRoute = {
    action: mailedLinkPath.slice('/api/auth/'.length),
    methods: ['GET', 'POST'],
    signsIn: true,
    handler(request, reply, wire) {
      if (request.method !== 'POST') return showMailedLink(pages, request, reply, wire);
      return wire.signIn(request, reply, wire.guardPost(request), {
        authorize: proof,
        detail: { method: 'email' },
      });
    },
  };
  const wayIn: WayIn = {
    id: 'email',
    providers: providersOf,
    routes: [
      askMailRoute(ask, 'email'),
      askMailRoute(ask, 'nodemailer'),
      checkInboxRoute(pages),
      callback,
    ],
    signInPage(request, params) {
      const said = emailSignInNotice(params);
      const secure = kit.secureOf(request);
      const codeForm =
        said?.codeForm === true
          ? { email: askedAddress.read(request.headers.cookie, secure) }
          : undefined;
      return Promise.resolve({
        emailSignIn: { codeForm },
        ...(said !== undefined && { notice: said.notice }),
      });
    },
    // The address kept for the code's form goes with the sign-in, whichever way it was made.
    afterSignIn(signedIn) {
      const held = askedAddress.read(signedIn.request.headers.cookie, signedIn.secure);
      return Promise.resolve(held === undefined ? [] : [askedAddress.forget(signedIn.secure)]);
    },
  };
  return { wayIn };
}
