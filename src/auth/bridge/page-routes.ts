import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../http/error-handler.js';
import { HttpError } from '../../http/errors.js';
import { storeUnavailable } from '../../http/answer.js';
import { sendWebResponse } from '../../http/web-bridge.js';
import { challengeCookieName } from '../../challenge/challenge-cookie.js';
import type { AuthPages, PageView, SignedInUser } from '../../pages/signin/auth-pages.js';
import { authBasePath } from './auth-config.js';
import { parseCookies } from '../cookies/cookies.js';
import { StoreUnavailableError } from '../request/request-context.js';
import { isSecure, originOf } from '../request/request-site.js';
import type { MountedWaysIn } from '../way-in.js';

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/**
 * What a page of this origin prints its forms with (Auth.js's CSRF token and the cookies to
 * set), or Auth.js's own answer when its CSRF action gave none (fast paths off).
 */
export type PageViewOf = (
  request: FastifyRequest,
  query: string,
) => Promise<Omit<PageView, 'signedIn'> | Response>;

export interface PageRouteDeps {
  pages: AuthPages | undefined;
  publicOrigin: string | undefined;
  /** Who a session cookie signs in (src/auth/register.ts); rejects with StoreUnavailableError. */
  signedInUser:
    | ((cookieHeader: string | undefined, secure: boolean) => Promise<SignedInUser | null>)
    | undefined;
  pageView: PageViewOf;
  /** What the ways in add to the sign-in page. */
  signInPages: MountedWaysIn['signInPages'];
  /** The action as Auth.js answers it, behind the wing's guards. */
  toAuthjs: Handler;
}

const unavailable = (reply: FastifyReply) => sendError(reply, storeUnavailable());

/** Who is signed in, for a page that greets: `undefined` when the store cannot say now. */
async function signedInFor(deps: PageRouteDeps, request: FastifyRequest) {
  if (deps.signedInUser === undefined) return undefined;
  try {
    return await deps.signedInUser(request.headers.cookie, isSecure(request, deps.publicOrigin));
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    // The page still works without the greeting; the session read itself answers 503.
    request.log.warn({ err: error.cause }, 'database unavailable: page shown without session');
    return undefined;
  }
}

/** What the ways in show on the sign-in page for this browser, or 'unavailable'. */
async function signInPageAdditions(
  deps: PageRouteDeps,
  request: FastifyRequest,
  query: string,
): Promise<Partial<PageView> | 'unavailable'> {
  if (deps.signInPages.length === 0) return {};
  const params = new URLSearchParams(query);
  const held = parseCookies(request.headers.cookie).get(
    challengeCookieName(isSecure(request, deps.publicOrigin)),
  );
  const challenge = held === '' ? undefined : held;
  const shown: Partial<PageView> = {};
  for (const add of deps.signInPages) {
    const addition = await add(request, params, challenge);
    if (addition === 'unavailable') return addition;
    if (addition !== null) Object.assign(shown, addition);
  }
  return shown;
}

/** Gatehouse's sign-in or sign-out page (GET and HEAD); a POST to /signout stays Auth.js's. */
export function pageRoute(deps: PageRouteDeps, action: 'signin' | 'signout'): Handler {
  const { pages } = deps;
  return async function showPage(request, reply) {
    if (request.method === 'POST' || pages === undefined) return deps.toAuthjs(request, reply);
    const at = request.url.indexOf('?');
    const query = at === -1 ? '' : request.url.slice(at);
    const view = await deps.pageView(request, query);
    if (view instanceof Response) return sendWebResponse(reply, view);
    const shown = action === 'signin' ? await signInPageAdditions(deps, request, query) : {};
    if (shown === 'unavailable') return unavailable(reply);
    return pages.show(action, request, reply, {
      ...view,
      signedIn: await signedInFor(deps, request),
      ...shown,
    });
  };
}

/**
 * `/`: the sign-in page for a visitor who is not signed in; who is signed in (or
 * SIGNED_IN_URL) for one who is. Read through the same session check as every session read,
 * so a revoked session is nobody. It does not slide the session: only session reads do.
 */
export function homeRoute(deps: PageRouteDeps): Handler {
  return async function home(request, reply) {
    const { pages, signedInUser } = deps;
    if (pages === undefined || signedInUser === undefined) {
      return sendError(reply, new HttpError('not_found'));
    }
    const secure = isSecure(request, deps.publicOrigin);
    const origin = originOf(request, deps.publicOrigin);
    let user: SignedInUser | null;
    try {
      user = await signedInUser(request.headers.cookie, secure);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      request.log.error({ err: error.cause }, 'database unavailable during session read');
      return unavailable(reply);
    }
    const target = pages.homeRedirect(origin, user);
    if (target !== undefined || user === null) {
      return reply
        .code(303)
        .headers({ location: target ?? `${origin}${authBasePath}/signin` })
        .send();
    }
    const view = await deps.pageView(request, '');
    if (view instanceof Response) return sendWebResponse(reply, view);
    return pages.home(reply, { ...view, signedIn: user });
  };
}
