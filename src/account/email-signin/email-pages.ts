import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { settleCallbackUrl } from '../../auth/cookies/callback-url.js';
import type { WireKit, WireRoute } from '../../auth/way-in.js';
import type { Database } from '../../db/schema.js';
import { queryOf } from '../../pages/signin/form-post.js';
import {
  renderCheckInboxPage,
  renderMailedLinkPage,
  type MailedLinkView,
} from '../../pages/signin/email-signin-pages.js';
import { findLive } from '../model/secrets.js';
import type { PageKit } from '../page-kit.js';
import type { AskedAddress } from './asked-address.js';

/*
 * The pages of a sign-in by e-mail under Auth.js's base path: `GET /api/auth/verify-request`
 * ("check your inbox", with the code form) and `GET /api/auth/callback/email` (the mailed
 * link: read, never used, so a mail scanner's GET spends nothing; its button posts the token to
 * the same path, which signs in). The sign-in page's look, CSP and CSRF pair; their forms post
 * to a sign-in path, which a browser under `no-referrer` would post with `Origin: null` (refused
 * as login CSRF), so they send `Referrer-Policy: same-origin`: the link's URL still reaches no
 * other origin, as the page loads nothing from one but the logo, which gets no referrer.
 */

export interface EmailPagesDeps {
  db: Kysely<Database>;
  kit: Pick<PageKit, 'shell' | 'csrfFor' | 'send' | 'tokenOf'>;
  askedAddress: Pick<AskedAddress, 'read'>;
  now: () => number;
}

/** The page's CSRF token for this browser, and the cookie to set when it held none. */
function formCsrf(deps: EmailPagesDeps, request: FastifyRequest) {
  const csrf = deps.kit.csrfFor(request);
  return { csrfToken: csrf.token, cookie: csrf.cookie };
}

/** `GET /api/auth/verify-request`: where the request's answer sends the browser. */
export function checkInboxRoute(deps: EmailPagesDeps): WireRoute {
  return {
    action: 'verify-request',
    methods: ['GET'],
    handler(request, reply, wire: WireKit) {
      const { csrfToken, cookie } = formCsrf(deps, request);
      const email = deps.askedAddress.read(request.headers.cookie, wire.site(request).secure);
      const html = renderCheckInboxPage(deps.kit.shell, { csrfToken, email });
      return deps.kit.send(reply, 200, html, { cookie, referrer: 'same-origin' });
    },
  };
}

/**
 * The mailed link's GET: the page for its secret as read now. A `callbackUrl` in the link that
 * would lead off this origin is left out (Auth.js then lands the sign-in on the origin).
 */
export async function showMailedLink(
  deps: EmailPagesDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  wire: WireKit,
): Promise<FastifyReply> {
  const token = deps.kit.tokenOf(request);
  const live =
    token === undefined ? null : await findLive(deps.db, 'email_signin', token, deps.now());
  const { csrfToken, cookie } = formCsrf(deps, request);
  const asked = new URLSearchParams(queryOf(request.url)).get('callbackUrl');
  const view: MailedLinkView =
    token === undefined || live === null
      ? { spent: true }
      : {
          csrfToken,
          token,
          callbackUrl:
            asked === null ? undefined : settleCallbackUrl(asked, wire.site(request).origin),
          email: live.email,
          newAccount: live.userId === null,
        };
  const html = renderMailedLinkPage(deps.kit.shell, view);
  // A page without a form sets no CSRF cookie.
  const set = 'spent' in view ? undefined : cookie;
  return deps.kit.send(reply, 200, html, { cookie: set, referrer: 'same-origin' });
}
