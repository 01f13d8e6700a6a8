import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../http/error-handler.js';
import type { HttpError } from '../http/errors.js';
import { paletteFor } from './colour.js';
import type { PageShell } from './layout.js';
import { signInBusy, signInNotice, signOutBusy, signedOutParam } from './notices.js';
import { pagePolicy } from './page-csp.js';
import { pageDefaults, type PageSettings } from '../config/page-settings.js';
import { pageStyle } from './page-style.js';
import { renderSignInPage } from './signin-page.js';
import { renderSignOutPage } from './signout-page.js';

/**
 * Auth.js's CSRF token for this browser, exactly as its CSRF action gives it (the auth wing
 * computes it, src/auth/page-csrf.ts): the token the form carries, the cookies to set with
 * the page (a new double-submit cookie unless the one held verifies; the callback-url
 * cookie), and the callback URL it settled on.
 */
export interface PageCsrf {
  csrfToken: string;
  cookies: string[];
  callbackUrl: string;
}

/** What a page is printed with: the public origin (AUTH_URL's, else the request's) and CSRF. */
export interface PageView {
  origin: string;
  csrf: PageCsrf;
}

/** The HTML pages Gatehouse answers in place of Auth.js's built-in ones. */
export interface AuthPages {
  /** Answers GET (and HEAD) on `/api/auth/signin` or `/api/auth/signout`. */
  show(
    action: 'signin' | 'signout',
    request: FastifyRequest,
    reply: FastifyReply,
    view: PageView,
  ): Promise<FastifyReply>;
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
}

function queryOf(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at);
}

/** Auth.js reads fields and query parameters through `Object.fromEntries`: the last one counts. */
function lastValue(params: URLSearchParams, name: string): string | undefined {
  const value = params.getAll(name).at(-1);
  return value === '' ? undefined : value;
}

/**
 * A browser submitting one of the pages' forms: a form post that asks for HTML. Auth.js clients
 * send `X-Auth-Return-Redirect` and read JSON, so they keep today's JSON answer.
 */
function isBrowserFormPost(request: FastifyRequest): boolean {
  if (request.headers['x-auth-return-redirect'] !== undefined) return false;
  const mediaType = (request.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase();
  const accept = (request.headers.accept ?? '').toLowerCase();
  return mediaType === 'application/x-www-form-urlencoded' && accept.includes('text/html');
}

function postedField(request: FastifyRequest, name: string): string | undefined {
  if (!(request.body instanceof Buffer)) return undefined;
  return lastValue(new URLSearchParams(request.body.toString('utf8')), name);
}

/**
 * A URL on this origin, in the form a browser would send it (quotes and angle brackets
 * percent-encoded: what the page prints is the URL, not the text that asked for it); the bare
 * origin stays as Auth.js writes it. Undefined for anything else.
 */
function sameOrigin(candidate: string | undefined, origin: string): string | undefined {
  if (candidate === undefined) return undefined;
  if (candidate === origin) return origin;
  try {
    const url = new URL(candidate, origin);
    return url.origin === origin ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where the sign-in form sends people: Auth.js's choice, but never back to a page of the
 * service itself. After the sign-out page, Auth.js's callback-url cookie names the sign-in
 * page's "signed out" notice; signing in from there must not land on it again.
 */
function signInDestination(
  candidate: string | undefined,
  origin: string,
  basePath: string,
): string {
  const url = sameOrigin(candidate, origin);
  if (url === undefined) return origin;
  const path = new URL(url).pathname;
  return path === basePath || path.startsWith(`${basePath}/`) ? origin : url;
}

/**
 * Where the sign-out form sends people: where the page was asked to send them (as Auth.js
 * settled it), else the sign-in page with its "signed out" notice.
 */
function signOutDestination(settled: string | undefined, origin: string, basePath: string): string {
  return sameOrigin(settled, origin) ?? `${origin}${basePath}/signin?${signedOutParam}=1`;
}

/**
 * Gatehouse's sign-in and sign-out pages under `basePath` (where Auth.js answers), branded by
 * `settings` (fixed at start-up).
 */
export function createAuthPages(
  basePath: string,
  settings: PageSettings = pageDefaults,
): AuthPages {
  const style = pageStyle(paletteFor(settings.accentColor));
  const shell: PageShell = {
    productName: settings.productName,
    logoUrl: settings.logoUrl,
    style,
    basePath,
  };
  const policy = pagePolicy(style, settings.logoUrl);
  const signInPaths = new Set([
    `${basePath}/callback/credentials`,
    `${basePath}/signin/credentials`,
  ]);
  const signOutPath = `${basePath}/signout`;

  function send(
    reply: FastifyReply,
    status: number,
    headers: Record<string, string>,
    cookies: string[],
    page: string,
  ): FastifyReply {
    reply.code(status).headers({
      ...headers,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': policy,
      // Under `no-referrer` a browser sends `Origin: null` with a form post, even to its own
      // origin, and a sign-in post from a foreign or opaque origin is refused (login CSRF).
      // `same-origin` keeps the real Origin on the pages' own posts and sends nothing elsewhere.
      'referrer-policy': 'same-origin',
    });
    if (cookies.length > 0) reply.header('set-cookie', cookies);
    return reply.send(page);
  }

  /** The page again, ready to resend: a fresh form with the busy notice and the error's status. */
  async function showBusy(
    action: 'signin' | 'signout',
    request: FastifyRequest,
    reply: FastifyReply,
    error: HttpError,
    view: PageView | undefined,
  ): Promise<FastifyReply> {
    if (view === undefined) return sendError(reply, error);
    const { origin, csrf } = view;
    // The post's own callbackUrl (Auth.js checks it again when the form is sent again).
    const posted = sameOrigin(postedField(request, 'callbackUrl'), origin);
    const page =
      action === 'signout'
        ? renderSignOutPage(shell, {
            csrfToken: csrf.csrfToken,
            callbackUrl: signOutDestination(posted, origin, basePath),
            notice: signOutBusy,
          })
        : renderSignInPage(shell, {
            csrfToken: csrf.csrfToken,
            callbackUrl: signInDestination(posted ?? csrf.callbackUrl, origin, basePath),
            notice: signInBusy,
          });
    return send(reply, error.status, error.headers, csrf.cookies, page);
  }

  return {
    async show(action, request, reply, { origin, csrf }) {
      const params = new URLSearchParams(queryOf(request.url));
      const page =
        action === 'signin'
          ? renderSignInPage(shell, {
              csrfToken: csrf.csrfToken,
              callbackUrl: signInDestination(csrf.callbackUrl, origin, basePath),
              notice: signInNotice(params),
            })
          : renderSignOutPage(shell, {
              csrfToken: csrf.csrfToken,
              callbackUrl: signOutDestination(
                lastValue(params, 'callbackUrl') === undefined ? undefined : csrf.callbackUrl,
                origin,
                basePath,
              ),
              notice: undefined,
            });
      return send(reply, 200, {}, csrf.cookies, page);
    },

    busy(request, reply, error, view) {
      const path = request.url.split('?', 1)[0] ?? '';
      const isSignOut = path === signOutPath;
      if ((!isSignOut && !signInPaths.has(path)) || !isBrowserFormPost(request)) return undefined;
      return view().then((ready) =>
        showBusy(isSignOut ? 'signout' : 'signin', request, reply, error, ready),
      );
    },
  };
}
