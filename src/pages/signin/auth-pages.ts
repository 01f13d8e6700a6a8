import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../http/error-handler.js';
import type { HttpError } from '../../http/errors.js';
import { paletteFor } from '../colour.js';
import { renderCrossSitePage, type CrossSiteView } from '../cross-site-page.js';
import {
  sameOrigin,
  signedInTarget,
  signInDestination,
  signOutDestination,
} from './destinations.js';
import { isBrowserFormPost, lastValue, postedField, queryOf } from './form-post.js';
import { renderHomePage } from './home-page.js';
import { forgetEmail, keepEmail, readKeptEmail } from './kept-email.js';
import { holdsChallenge } from '../../challenge/challenge-cookie.js';
import { createShell, type PageShell, type SignedInUser } from '../layout.js';
import {
  signInBusy,
  signInNotice,
  signOutBusy,
  type EnrolmentRefusal,
  type Notice,
} from '../notices.js';
import { afterPasswordParam, readRetryAfter } from '../retry-after.js';
import { pagePolicy } from '../page-csp.js';
import { pageDefaults, type PageSettings } from '../../config/page-settings.js';
import { pageStyle } from '../page-style.js';
import {
  renderEnrolledPage,
  renderSignInPage,
  type SignInProvider,
  type SignInView,
} from './signin-page.js';

import { renderSignOutPage } from './signout-page.js';
import { sendPage } from '../send-page.js';

export type { SignInProvider } from './signin-page.js';
export type { SignedInUser } from '../layout.js';
export type { CrossSiteView } from '../cross-site-page.js';

/** The enrolment step's refusals, by Auth.js's `code`: which field to mark. */
const enrolmentRefusals = new Map<string, EnrolmentRefusal>([
  ['second_factor_invalid', 'otp'],
  ['email_code_invalid', 'email_code'],
  ['email_code_required', 'email_code_missing'],
  // Only with `afterPassword=1`: the auth wing shows the step for no other throttled answer.
  ['rate_limited', 'paused'],
]);

/**
 * Auth.js's CSRF token for this browser, exactly as its CSRF action gives it (the auth wing
 * computes it, src/auth/bridge/page-csrf.ts): the token the form carries, the cookies to set with
 * the page (a new double-submit cookie unless the one held verifies; the callback-url
 * cookie), and the callback URL it settled on.
 */
export interface PageCsrf {
  csrfToken: string;
  cookies: string[];
  callbackUrl: string;
}

/**
 * What a page is printed with: the public origin (AUTH_URL's, else the request's), whether the
 * answer is for https (cookie names), CSRF, and who is signed in (the auth wing reads the
 * session, revocation included): `null` nobody, `undefined` when it could not tell.
 */
export interface PageView {
  origin: string;
  secure: boolean;
  csrf: PageCsrf;
  signedIn?: SignedInUser | null | undefined;
  /**
   * SECOND_FACTOR=required: the app's key the browser's challenge enrols (the account wing
   * derives it), when the sign-in page is the enrolment step.
   */
  enrolmentKey?: { secret: string; qrSvg: string; codeSentTo: string | null } | undefined;
  /** Identity providers: a button each on the sign-in page, in this order. */
  providers?: readonly SignInProvider[] | undefined;
  /** A way in's own words for this page's query (its refusals), in place of the page's. */
  notice?: Notice | undefined;
  /**
   * An identity waits for this browser to prove the account it is offered to: the page offers a
   * code by mail, and asks for it (`askCode`) once one was sent.
   */
  identityOffer?: { askCode: boolean } | undefined;
  /** EMAIL_SIGNIN=on: "Email me a sign-in link", and after a wrong code its form again. */
  emailSignIn?: SignInView['emailSignIn'];
}

/** The HTML pages Gatehouse answers in place of Auth.js's built-in ones, and `/`. */
export interface AuthPages {
  /** Answers GET (and HEAD) on `/api/auth/signin` or `/api/auth/signout`. */
  show(
    action: 'signin' | 'signout',
    request: FastifyRequest,
    reply: FastifyReply,
    view: PageView,
  ): Promise<FastifyReply>;
  /**
   * Where `/` sends this visitor instead of showing its page: the sign-in page when nobody is
   * signed in, SIGNED_IN_URL when it is set. Undefined: show the page (`home`).
   */
  homeRedirect(origin: string, signedIn: SignedInUser | null): string | undefined;
  /** `/` for a signed-in visitor: who they are, and a sign-out button. */
  home(reply: FastifyReply, view: PageView & { signedIn: SignedInUser }): FastifyReply;
  /**
   * A browser's form post to sign in or out that the service cannot take now: the page in its
   * busy state, with the error's status (503) and headers (`Retry-After`). `undefined` for
   * every other caller, who gets the JSON error as before (`view` is only asked for the page;
   * without one, the JSON error too).
   */
  busy(
    request: FastifyRequest,
    reply: FastifyReply,
    error: HttpError,
    view: () => Promise<PageView | undefined>,
  ): Promise<FastifyReply> | undefined;
  /**
   * A browser's form post to sign in or out refused as cross-site: a page that says why, with
   * the error's status (403). `undefined` for every other caller, who gets the JSON error.
   */
  crossSite(
    request: FastifyRequest,
    reply: FastifyReply,
    error: HttpError,
    view: Omit<CrossSiteView, 'action'>,
  ): FastifyReply | undefined;
  /**
   * Called as a browser's sign-in form post is answered: a failure's redirect to the sign-in
   * page keeps the email typed (src/pages/signin/kept-email.ts), a success forgets it. Other callers'
   * answers are left exactly as they are.
   */
  afterSignInPost(request: FastifyRequest, reply: FastifyReply, secure: boolean): void;
  /**
   * A browser's enrolment at sign-in succeeded: instead of Auth.js's redirect, the recovery
   * codes (shown this once) and a link on to where the redirect led, with its cookies (the
   * session's among them).
   */
  enrolled(
    reply: FastifyReply,
    view: { recoveryCodes: readonly string[]; continueUrl: string; cookies: string[] },
  ): FastifyReply;
}

/** What every page of the wing is printed and sent with, fixed at start-up. */
interface Pages {
  basePath: string;
  shell: PageShell;
  policy: ReturnType<typeof pagePolicy>;
  signInPath: string;
  /** The paths a browser's sign-in form posts to. */
  signInPaths: ReadonlySet<string>;
  signOutPath: string;
  signedInUrl: string | undefined;
  /** The reset page the sign-in page links to when mail is on. */
  forgotPasswordUrl: string | undefined;
  /** The sign-up page the sign-in page links to when SIGNUP=open (and mail is on). */
  signupUrl: string | undefined;
}

/**
 * Gatehouse's sign-in and sign-out pages under `basePath` (where Auth.js answers), and `/`,
 * branded and directed by `settings` (fixed at start-up).
 */
export function createAuthPages(
  basePath: string,
  settings: PageSettings = pageDefaults,
  /** The reset page the sign-in page links to when mail is on. */
  forgotPasswordUrl?: string,
  /** The sign-up page the sign-in page links to when SIGNUP=open (and mail is on). */
  signupUrl?: string,
): AuthPages {
  const style = pageStyle(paletteFor(settings.accentColor));
  const signInPath = `${basePath}/signin`;
  const pages: Pages = {
    basePath,
    shell: createShell(settings, style, basePath),
    policy: pagePolicy(style, settings.logoUrl, settings.formTargets),
    signInPath,
    signInPaths: new Set([`${basePath}/callback/credentials`, `${signInPath}/credentials`]),
    signOutPath: `${basePath}/signout`,
    signedInUrl: settings.signedInUrl,
    forgotPasswordUrl,
    signupUrl,
  };
  const { shell } = pages;

  return {
    async show(action, request, reply, view) {
      const page =
        action === 'signin' ? signInPage(pages, request, view) : signOutPage(pages, request, view);
      return send(pages, reply, 200, {}, view.csrf.cookies, page);
    },

    homeRedirect(origin, signedIn) {
      if (signedIn === null) return `${origin}${signInPath}`;
      const { signedInUrl } = pages;
      return signedInUrl === undefined ? undefined : signedInTarget(signedInUrl, origin);
    },

    home(reply, { origin, csrf, signedIn }) {
      const page = renderHomePage(shell, {
        user: signedIn,
        csrfToken: csrf.csrfToken,
        signOutUrl: signOutDestination(undefined, origin, basePath),
      });
      return send(pages, reply, 200, {}, csrf.cookies, page);
    },

    busy(request, reply, error, view) {
      const action = formPostOf(pages, request);
      if (action === undefined) return undefined;
      return view().then((ready) => showBusy(pages, action, request, reply, error, ready));
    },

    crossSite(request, reply, error, view) {
      const action = formPostOf(pages, request);
      if (action === undefined) return undefined;
      return send(
        pages,
        reply,
        error.status,
        error.headers,
        [],
        renderCrossSitePage(shell, { action, ...view }),
      );
    },

    enrolled(reply, { recoveryCodes, continueUrl, cookies }) {
      return send(
        pages,
        reply,
        200,
        {},
        cookies,
        renderEnrolledPage(shell, { recoveryCodes, continueUrl }),
      );
    },

    afterSignInPost: (request, reply, secure) => afterSignInPost(pages, request, reply, secure),
  };
}

function send(
  { policy }: Pages,
  reply: FastifyReply,
  status: number,
  headers: Record<string, string>,
  cookies: string[],
  page: string,
): FastifyReply {
  // Under `no-referrer` a browser sends `Origin: null` with a form post, even to its own
  // origin, and a sign-in post from a foreign or opaque origin is refused (login CSRF).
  return sendPage(reply, page, { status, policy, referrer: 'same-origin', cookies, headers });
}

/** Where the sign-in page's form leads once signed in. */
function toSignIn(pages: Pages, candidate: string | undefined, origin: string): string {
  return signInDestination(candidate, origin, pages.basePath, pages.signedInUrl);
}

/** Which page a post to `path` came from, if a browser's form post to one of the pages. */
function formPostOf(pages: Pages, request: FastifyRequest): 'signin' | 'signout' | undefined {
  const path = request.url.split('?', 1)[0] ?? '';
  const action =
    path === pages.signOutPath ? 'signout' : pages.signInPaths.has(path) ? 'signin' : undefined;
  return action !== undefined && isBrowserFormPost(request) ? action : undefined;
}

/** The sign-in page as a GET shows it: a failure's notice, the second step or enrolment. */
function signInPage(pages: Pages, request: FastifyRequest, view: PageView): string {
  const { origin, secure, csrf, signedIn, enrolmentKey, providers, notice, identityOffer } = view;
  const { forgotPasswordUrl, signupUrl, basePath } = pages;
  const params = new URLSearchParams(queryOf(request.url));
  const callbackUrl = toSignIn(pages, csrf.callbackUrl, origin);
  // Only on the page a failure sends people to: elsewhere the email is not the point.
  const email = params.has('error') ? readKeptEmail(request.headers.cookie, secure) : undefined;
  const code = params.get('error') === 'CredentialsSignin' ? params.get('code') : null;
  const enrolment =
    enrolmentKey === undefined
      ? undefined
      : {
          key: enrolmentKey,
          codeSentTo: enrolmentKey.codeSentTo,
          refused: code === null ? undefined : enrolmentRefusals.get(code),
          retryAfterSeconds: readRetryAfter(params),
        };
  // A second factor's lock keeps the second step too: a recovery code is checked through it.
  const codesPaused = code === 'rate_limited' && params.get(afterPasswordParam) === '1';
  const secondStep =
    enrolment === undefined &&
    (code === 'second_factor_required' || code === 'second_factor_invalid' || codesPaused) &&
    holdsChallenge(request.headers.cookie, secure)
      ? {
          invalid: code === 'second_factor_invalid',
          paused: codesPaused ? signInNotice(params) : undefined,
        }
      : undefined;
  return renderSignInPage(pages.shell, {
    csrfToken: csrf.csrfToken,
    callbackUrl,
    // The forgot link exists exactly when mail is on (src/app.ts).
    notice: notice ?? signInNotice(params, email, forgotPasswordUrl !== undefined),
    providers,
    identityOffer,
    emailSignIn: view.emailSignIn,
    email,
    secondStep,
    enrolment,
    // The greeting's links for a signed-in visitor.
    signedIn: signedIn
      ? {
          user: signedIn,
          continueUrl: callbackUrl,
          signOutUrl: signOutDestination(undefined, origin, basePath),
        }
      : undefined,
    forgotPasswordUrl,
    signupUrl,
  });
}

function signOutPage(
  pages: Pages,
  request: FastifyRequest,
  { origin, csrf, signedIn }: PageView,
): string {
  const params = new URLSearchParams(queryOf(request.url));
  return renderSignOutPage(pages.shell, {
    csrfToken: csrf.csrfToken,
    callbackUrl: signOutDestination(
      lastValue(params, 'callbackUrl') === undefined ? undefined : csrf.callbackUrl,
      origin,
      pages.basePath,
    ),
    notice: undefined,
    signedIn,
  });
}

/** The page again, ready to resend: a fresh form with the busy notice and the error's status. */
function showBusy(
  pages: Pages,
  action: 'signin' | 'signout',
  request: FastifyRequest,
  reply: FastifyReply,
  error: HttpError,
  view: PageView | undefined,
): FastifyReply {
  if (view === undefined) return sendError(reply, error);
  const { origin, csrf } = view;
  // The post's own callbackUrl (Auth.js checks it again when the form is sent again).
  const posted = sameOrigin(postedField(request, 'callbackUrl'), origin);
  const page =
    action === 'signout'
      ? renderSignOutPage(pages.shell, {
          csrfToken: csrf.csrfToken,
          callbackUrl: signOutDestination(posted, origin, pages.basePath),
          notice: signOutBusy,
        })
      : renderSignInPage(pages.shell, {
          csrfToken: csrf.csrfToken,
          callbackUrl: toSignIn(pages, posted ?? csrf.callbackUrl, origin),
          notice: signInBusy,
          email: postedField(request, 'email'),
          forgotPasswordUrl: pages.forgotPasswordUrl,
          signupUrl: pages.signupUrl,
        });
  return send(pages, reply, error.status, error.headers, csrf.cookies, page);
}

function afterSignInPost(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  secure: boolean,
): void {
  const { signInPath } = pages;
  if (formPostOf(pages, request) !== 'signin' || reply.statusCode !== 302) return;
  const location = reply.getHeader('location');
  if (typeof location !== 'string') return;
  let failed: boolean;
  try {
    const url = new URL(location);
    failed = url.pathname === signInPath && url.searchParams.has('error');
  } catch {
    // Auth.js writes absolute URLs; anything else is left alone.
    return;
  }
  const cookie = failed
    ? keepEmail(postedField(request, 'email'), signInPath, secure)
    : forgetEmail(signInPath, secure);
  if (cookie !== undefined) reply.header('set-cookie', cookie);
}
