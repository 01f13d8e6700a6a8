import { parseCookies } from '../../auth/cookies/cookies.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authBasePath } from '../../auth/bridge/auth-config.js';
import { suggestedAuthUrl } from '../../auth/signin/login-csrf-guard.js';
import type { PageViewOf } from '../../auth/bridge/routes.js';
import { HttpError } from '../../http/errors.js';
import type { Site } from '../../http/site.js';
import { sendWebResponse } from '../../http/web-bridge.js';
import { accountDoneNotice, doneParam } from '../../pages/account/account-notices.js';
import type { AccountPages, PageAnswer } from '../../pages/account/account-pages.js';
import { signOutDestination } from '../../pages/signin/destinations.js';
import { queryOf } from '../../pages/signin/form-post.js';
import type { AccountDeps, FormOperation, SignedIn } from '../action.js';
import type { Perform } from '../adapter.js';
import { CsrfRefusal } from '../csrf-guard.js';
import type { Guards } from '../guards.js';
import { servedForms } from '../account-operations.js';
import type { PagePaths } from '../paths.js';
import { readBody } from '../request-body.js';
import { accountPageData, answerFormPost, type Said } from './account-page-answers.js';

// An Origin header may be as long as a header; the page needs its start only.
const shownOriginMaxLength = 200;

export interface AccountPageDeps {
  actionDeps: AccountDeps;
  perform: Perform;
  guards: Guards;
  assertCsrf: (request: FastifyRequest, body: Record<string, unknown>) => void;
  /** Auth.js's CSRF token and cookies for the forms (the auth wing's, src/auth/bridge/routes.ts). */
  pageView: PageViewOf;
  pages: AccountPages;
  /** Where the page and its forms live (ACCOUNT_PAGES_PATH). */
  pagePaths: PagePaths;
  originOf: (request: FastifyRequest) => string;
  bodyLimitBytes: number;
}

const sessionCookiePattern = /^(?:__Secure-|__Host-)?authjs\.session-token(?:\.\d+)?$/;

/** Whether the request carries a session cookie (valid or not). */
function holdsSessionCookie(request: FastifyRequest): boolean {
  return [...parseCookies(request.headers.cookie).keys()].some((name) =>
    sessionCookiePattern.test(name),
  );
}

/**
 * To the sign-in page, which comes back to the account page. A browser that still holds a
 * session cookie had a session that ended (signed out elsewhere, a password reset, expiry): the
 * sign-in page says so (Auth.js's SessionRequired) instead of showing an empty form without a
 * word.
 */
function toSignIn(deps: AccountPageDeps, request: FastifyRequest, reply: FastifyReply) {
  const back = encodeURIComponent(deps.pagePaths.account);
  const ended = holdsSessionCookie(request) ? '&error=SessionRequired' : '';
  return reply
    .code(303)
    .header(
      'location',
      `${deps.originOf(request)}${authBasePath}/signin?callbackUrl=${back}${ended}`,
    )
    .send();
}

/** The request's session and user, or null when nobody is signed in. */
async function signedInOrNull(deps: AccountPageDeps, request: FastifyRequest) {
  try {
    return await deps.guards.session(request);
  } catch (error) {
    if (error instanceof HttpError && error.code === 'unauthenticated') return null;
    throw error;
  }
}

/** The account page for `signedIn`, with a fresh form and what to say. */
async function render(
  deps: AccountPageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  signedIn: SignedIn,
  said: Said,
  answer: PageAnswer,
): Promise<FastifyReply> {
  const data = await accountPageData(deps.actionDeps, signedIn, said);
  if (data === null) return toSignIn(deps, request, reply);
  const view = await deps.pageView(request, '');
  if (view instanceof Response) return sendWebResponse(reply, view);
  const signOutUrl = signOutDestination(undefined, view.origin, authBasePath);
  return deps.pages.account(
    reply,
    { ...data, csrfToken: view.csrf.csrfToken, signOutUrl },
    { ...answer, cookies: view.csrf.cookies },
  );
}

async function showPage(deps: AccountPageDeps, request: FastifyRequest, reply: FastifyReply) {
  const signedIn = await signedInOrNull(deps, request);
  if (signedIn === null) return toSignIn(deps, request, reply);
  const notice = accountDoneNotice(new URLSearchParams(queryOf(request.url)));
  return render(deps, request, reply, signedIn, { notice }, { status: 200 });
}

/** A form posted from another site: a page saying so (403), nothing done. */
function crossSite(
  deps: AccountPageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: CsrfRefusal,
) {
  const publicOrigin = deps.originOf(request);
  request.log.warn(
    { path: request.routeOptions.url, origin: refusal.requestOrigin, publicOrigin },
    'an account form was refused as cross-site',
  );
  return deps.pages.crossSite(reply, {
    requestOrigin: refusal.requestOrigin?.slice(0, shownOriginMaxLength),
    publicOrigin,
    suggestedAuthUrl: suggestedAuthUrl(refusal.requestOrigin),
  });
}

async function postForm(
  deps: AccountPageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  operation: FormOperation,
) {
  const body = readBody(request);
  let csrf: CsrfRefusal | undefined;
  try {
    deps.assertCsrf(request, body);
  } catch (error) {
    if (!(error instanceof CsrfRefusal)) throw error;
    if (error.reason === 'cross_site') return crossSite(deps, request, reply, error);
    // A missing or stale token: the page again, with a fresh one, saying why.
    csrf = error;
  }
  const signedIn = await signedInOrNull(deps, request);
  if (signedIn === null) return toSignIn(deps, request, reply);
  const answer = await answerFormPost(
    { operation, body, signedIn, csrf },
    {
      recent: deps.guards.recent,
      run: (action, who) => deps.perform(action, request, reply, body, who),
    },
  );
  if (answer.to === 'signin') return toSignIn(deps, request, reply);
  if (answer.to === 'done') {
    const page = `${deps.originOf(request)}${deps.pagePaths.account}`;
    return reply.code(303).header('location', `${page}?${doneParam}=${answer.done}`).send();
  }
  const { status, headers } = answer;
  return render(deps, request, reply, signedIn, answer.said, {
    status,
    ...(headers !== undefined && { headers }),
  });
}

/**
 * A handler whose session or account read found the database busy or unreachable (503): the
 * busy page with the error's `Retry-After`, not the JSON error.
 */
const orBusy =
  <A extends unknown[]>(
    deps: AccountPageDeps,
    handler: (request: FastifyRequest, reply: FastifyReply, ...rest: A) => Promise<FastifyReply>,
  ) =>
  async (request: FastifyRequest, reply: FastifyReply, ...rest: A) => {
    try {
      return await handler(request, reply, ...rest);
    } catch (error) {
      if (!(error instanceof HttpError) || error.status !== 503) throw error;
      return deps.pages.busy(reply, error.headers);
    }
  };

/**
 * `/account` and its forms, for browsers without script: GET shows the page with Auth.js's
 * CSRF token in every form; a form post (`application/x-www-form-urlencoded`) is checked as the
 * JSON routes check it (CSRF, then the guard), runs the same action, and answers 303 back to
 * the page with a notice (Post/Redirect/Get), or the page again with the error, its status and
 * the fields marked (src/account/self/account-page-answers.ts). Nobody signed in: 303 to the sign-in
 * page, which comes back here.
 */
export function registerAccountPages(site: Site, deps: AccountPageDeps): void {
  const { actionDeps } = deps;
  const accountPagePath = deps.pagePaths.account;
  const served = { mail: actionDeps.mail !== undefined, factors: actionDeps.totp !== undefined };
  const forms = servedForms(served, deps.pagePaths);
  site.declareRoutes({
    [accountPagePath]: ['GET', 'HEAD'],
    ...Object.fromEntries(forms.map(([path]) => [path, ['GET', 'HEAD', 'POST']])),
  });
  void site.app.register((scope, _options, done) => {
    scope.removeAllContentTypeParsers();
    // A plain form post only; bytes, parsed by readBody so a malformed body is our 400.
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes },
      (_request, body, parsed) => parsed(null, body),
    );
    // Redirects and errors too: an account answer is never stored by a cache.
    scope.addHook('onSend', (_request, reply, payload, next) => {
      reply.header('cache-control', 'no-store');
      next(null, payload);
    });
    scope.get(
      accountPagePath,
      orBusy(deps, (request, reply) => showPage(deps, request, reply)),
    );
    const post = orBusy(deps, (request, reply, operation: FormOperation) =>
      postForm(deps, request, reply, operation),
    );
    for (const [path, operation] of forms) {
      scope.post(path, (request, reply) => post(request, reply, operation));
      // The address a refused form leaves in the bar: opening it again shows the page.
      scope.get(path, (request, reply) =>
        reply
          .code(303)
          .header('location', `${deps.originOf(request)}${accountPagePath}`)
          .send(),
      );
    }
    done();
  });
}
