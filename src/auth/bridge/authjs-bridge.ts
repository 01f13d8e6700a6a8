import { Auth } from '@auth/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, HttpError } from '../../http/errors.js';
import { storeUnavailable } from '../../http/answer.js';
import { sendWebResponse, toWebRequest, webHeaders } from '../../http/web-bridge.js';
import type { Observer } from '../../observe/observer.js';
import type { AuthPages, PageCsrf } from '../../pages/signin/auth-pages.js';
import { withRetryAfter } from '../../pages/retry-after.js';
import {
  challengeCookieName,
  challengeSetCookie,
  challengeTtlSeconds,
} from '../../challenge/challenge-cookie.js';
import { authBasePath, type AuthConfigFor } from './auth-config.js';
import { withUsableCallbackUrls } from '../cookies/callback-url.js';
import { authCookieNames, type SessionCookiePrefix } from '../cookies/cookie-names.js';
import { heldSessionToken, parseCookies, withoutCookies } from '../cookies/cookies.js';
import { deviceCookieName, deviceSetCookie } from '../cookies/device-cookie.js';
import type { AccountEventSink, PendingAccountEvent } from '../request/account-events.js';
import type { AuthRequestContext } from '../request/request-context.js';
import { originOf } from '../request/request-site.js';
import type { MountedWaysIn, SignInVia } from '../way-in.js';
import {
  heldSessionTokens,
  servedPage,
  setCookieValue,
  signInOutcome,
  withCookie,
  withFailureShownAs,
  withJsonFields,
} from './answer-rewrites.js';

type Answer = Promise<FastifyReply> | FastifyReply;

export interface AuthjsBridgeOptions {
  configs: { http: AuthConfigFor; https: AuthConfigFor };
  sessionCookiePrefix: SessionCookiePrefix;
  publicOrigin: string | undefined;
  /** Told how each sign-in ended. */
  observer: Pick<Observer, 'signIn'>;
  /** Whether a session token reads, with the codec Auth.js is configured with for the scheme. */
  readsAsSessionToken: (token: string, secure: boolean) => Promise<boolean>;
  /** Answers a sign-in or sign-out we cannot take now (the busy page, or JSON). */
  refuse: (request: FastifyRequest, reply: FastifyReply, error: HttpError) => Answer;
  /** The account's record of sign-ins and sign-outs; none in apps built without it. */
  events?: AccountEventSink;
  /** Gatehouse's pages: a sign-in's addition may show one in place of Auth.js's redirect. */
  pages?: AuthPages | undefined;
  /** What the ways in add to Auth.js's provider list, given the wing's base URL. */
  providers?: ((authUrl: string) => Readonly<Record<string, unknown>>) | undefined;
  /** Auth.js error types the ways in's refusals raise (src/auth/way-in.ts). */
  refusalErrors: ReadonlySet<string>;
  /** The ways in's hooks after a browser's sign-in succeeded (src/auth/way-in.ts). */
  afterSignIn: MountedWaysIn['afterSignIn'];
}

/** A request as Auth.js sees it: at `path` (the route, mapped), with its body and scheme. */
export interface BridgeRoute {
  path: string;
  search: string;
  body: Buffer | undefined;
  secure: boolean;
  /** A way in's own sign-in: its check in place of the password's (src/auth/way-in.ts). */
  via?: SignInVia;
  /** Whether it signs in (an identity provider's callback); else only the credentials post. */
  signsIn?: boolean;
}

/**
 * The event goes to the record once the answer is out ('close' follows the last byte, or an
 * aborted answer): its database work never delays, or differs between, answers.
 */
function noteAfterAnswer(
  options: AuthjsBridgeOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  event: PendingAccountEvent,
) {
  const sink = options.events;
  if (sink === undefined) return;
  const client = { ip: request.ip, device: request.headers['user-agent'] ?? '' };
  reply.raw.once('close', () => sink.note(event, client));
}

/** Answers a request Auth.js could not finish because of us. */
function answerInterruption(
  options: AuthjsBridgeOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  context: AuthRequestContext,
  response: Response,
): Answer {
  const interruption = context.interruption;
  switch (interruption?.kind) {
    case undefined:
      return sendWebResponse(reply, response);
    case 'throttled': {
      // Auth.js's own answer (code=rate_limited), plus Retry-After; JSON callers get 429.
      reply.header('retry-after', String(interruption.retryAfterSeconds));
      const isJson = response.headers.get('content-type')?.startsWith('application/json');
      // A form post's browser follows the 302 and drops the header: the URL tells the page.
      if (!isJson) {
        return sendWebResponse(
          reply,
          withRetryAfter(response, interruption.retryAfterSeconds, interruption.afterPassword),
        );
      }
      const headers = new Headers(response.headers);
      return sendWebResponse(reply, new Response(response.body, { status: 429, headers }));
    }
    case 'overloaded':
      return options.refuse(request, reply, new HttpError('overloaded', { 'retry-after': '1' }));
    case 'unavailable':
      request.log.error({ err: interruption.error }, 'database unavailable during auth');
      return options.refuse(request, reply, storeUnavailable());
    case 'internal':
      request.log.error({ err: interruption.error }, 'unexpected error during auth');
      return reply.code(500).send(errorBody('internal_error', request.id));
  }
}

/**
 * The Web Request for Auth.js (callbackUrls it cannot use dropped, stray session chunks kept
 * out) and the request's context for our callbacks.
 */
async function requestFor(
  options: AuthjsBridgeOptions,
  request: FastifyRequest,
  route: BridgeRoute,
) {
  const { path, secure } = route;
  const origin = originOf(request, options.publicOrigin);
  const names = authCookieNames(secure, options.sessionCookiePrefix);
  // A callbackUrl Auth.js cannot use (it would answer 500, or fail before signing out) is
  // dropped, wherever it came from: Auth.js then falls back as for an absent one.
  const headers = webHeaders(request);
  const usable = withUsableCallbackUrls(
    {
      search: route.search,
      cookie: headers.get('cookie') ?? undefined,
      body: route.body,
      contentType: headers.get('content-type'),
    },
    origin,
    names.callbackUrl,
  );
  const cookies = parseCookies(request.headers.cookie);
  const held = await heldSessionToken(cookies, names.session, (whole) =>
    options.readsAsSessionToken(whole, secure),
  );
  // A whole session cookie that reads wins: Auth.js must not join strays into it.
  const cookie =
    usable.cookie === undefined || held.ignored.length === 0
      ? usable.cookie
      : withoutCookies(usable.cookie, new Set(held.ignored));
  if (cookie === undefined) headers.delete('cookie');
  else headers.set('cookie', cookie);
  const webRequest = toWebRequest(
    request,
    `${origin}${path}${usable.search}`,
    usable.body,
    headers,
  );
  const context: AuthRequestContext = {
    clientIp: request.ip,
    userAgent: request.headers['user-agent'] ?? '',
    origin,
    // As Auth.js reads it (chunked or not): signing in again must end the session held.
    previousSessionToken: held.token,
    // Sign-out ends every session the request holds a token for, whatever else it carries.
    ...(path === `${authBasePath}/signout` && {
      heldSessionTokens: heldSessionTokens(cookies, names.session),
    }),
  };
  if (route.via !== undefined) context.via = route.via;
  const signingIn =
    route.signsIn ?? (request.method === 'POST' && path === `${authBasePath}/callback/credentials`);
  const deviceCookie = signingIn ? cookies.get(deviceCookieName(secure)) : undefined;
  if (deviceCookie !== undefined) context.deviceCookie = deviceCookie;
  const challengeCookie = signingIn ? cookies.get(challengeCookieName(secure)) : undefined;
  if (challengeCookie !== undefined && challengeCookie !== '')
    context.challengeCookie = challengeCookie;
  return { webRequest, context, origin, signingIn };
}

/** The sign-in challenge set (after a right password) or cleared (after a sign-in). */
const challengeSet = (value: string | null, secure: boolean) =>
  challengeSetCookie(value ?? '', authBasePath, value === null ? 0 : challengeTtlSeconds, secure);

/**
 * A sign-in's answer as it goes out: the device cookie after Auth.js's own cookies (the same in
 * both modes: only this bridge adds it), the challenge set or cleared, what a check made to
 * show once, and the account's record of a success. `page`: shown in place of the redirect.
 */
async function signInAnswer(
  options: AuthjsBridgeOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  signIn: { context: AuthRequestContext; response: Response; secure: boolean; via?: SignInVia },
) {
  const { context, secure } = signIn;
  let response = signIn.response;
  const outcome = signInOutcome(context, options.refusalErrors);
  options.observer.signIn(outcome);
  const success = outcome === 'success';
  const signedInId = context.verifiedCredential?.userId;
  if (success && signedInId !== undefined) {
    const signedIn = { request, userId: signedInId, origin: context.origin, secure };
    for (const after of options.afterSignIn)
      for (const cookie of await after(signedIn)) response = withCookie(response, cookie);
  }
  const device = success ? context.issuedDevice : undefined;
  if (device !== undefined) response = withCookie(response, deviceSetCookie(device.cookie, secure));
  if (context.issuedChallenge !== undefined)
    response = withCookie(response, challengeSet(context.issuedChallenge, secure));
  else if (success && context.challengeCookie !== undefined)
    response = withCookie(response, challengeSet(null, secure));
  let page: (() => Answer) | undefined;
  const addition = context.addition;
  if (success && addition !== undefined) {
    if (response.headers.get('content-type')?.startsWith('application/json'))
      response = await withJsonFields(response, addition.json);
    else if (response.status === 302) {
      const continueUrl = response.headers.get('location');
      const cookies = response.headers.getSetCookie();
      const { pages } = options;
      if (pages !== undefined && continueUrl !== null && addition.page !== undefined) {
        const show = addition.page;
        page = () => show(reply, pages, { continueUrl, cookies });
      }
    }
  }
  const userId = context.verifiedCredential?.userId;
  const detail = signIn.via?.detail;
  // The device goes to the record with the sign-in: a new one is told to the owner from there.
  const event: PendingAccountEvent | undefined =
    success && userId !== undefined
      ? {
          type: 'signin',
          userId,
          ...(detail !== undefined && { detail: { ...detail } }),
          ...(device !== undefined && {
            device: {
              id: device.id,
              cookieVerified: device.cookieVerified,
              origin: context.origin,
            },
          }),
        }
      : context.accountEvent;
  return { response, event, page };
}

/** The request as Auth.js sees it at `route.path`; our interruptions answered. */
async function answer(
  options: AuthjsBridgeOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  route: BridgeRoute,
): Promise<FastifyReply> {
  const { path, secure } = route;
  const config = secure ? options.configs.https : options.configs.http;
  const { webRequest, context, origin, signingIn } = await requestFor(options, request, route);
  let response: Response;
  try {
    response = servedPage(path, await Auth(webRequest, config(context)));
    if (
      options.providers !== undefined &&
      path === `${authBasePath}/providers` &&
      response.status === 200
    ) {
      response = await withJsonFields(response, options.providers(`${origin}${authBasePath}`));
    }
  } catch (error) {
    if (signingIn) options.observer.signIn('error');
    throw error;
  }
  const failedAs = route.via?.failedAs;
  if (failedAs !== undefined) {
    const provider = path.slice(path.lastIndexOf('/') + 1);
    response = await withFailureShownAs(response, origin, { error: failedAs, provider });
  }
  // A way in's cookies go whatever the outcome (a ceremony's challenge is spent either way).
  for (const cookie of route.via?.cookies ?? []) response = withCookie(response, cookie);
  let event = context.accountEvent;
  let page: (() => Answer) | undefined;
  if (signingIn) {
    const via = route.via;
    ({ response, event, page } = await signInAnswer(options, request, reply, {
      context,
      response,
      secure,
      ...(via !== undefined && { via }),
    }));
  }
  if (event !== undefined) noteAfterAnswer(options, request, reply, event);
  return page?.() ?? answerInterruption(options, request, reply, context, response);
}

/** What a page needs to print its form, or Auth.js's own answer when it gave none. */
export type PageCsrfResult = ({ ok: true } & PageCsrf) | { ok: false; response: Response };

/**
 * Auth.js's own CSRF action at `url` for these cookies: the token, the cookies it set, and the
 * callback URL it settled on (it sets the callback-url cookie whenever its choice differs from
 * the one held). Anything but a token comes back to be passed on unchanged.
 */
async function csrfAction(
  options: AuthjsBridgeOptions,
  request: FastifyRequest,
  { origin, secure }: { origin: string; secure: boolean },
  url: string,
  cookie: string | undefined,
): Promise<PageCsrfResult> {
  const headers = new Headers();
  if (cookie !== undefined) headers.set('cookie', cookie);
  const config = secure ? options.configs.https : options.configs.http;
  const response = await Auth(
    new Request(url, { headers }),
    config({ clientIp: request.ip, origin, previousSessionToken: undefined }),
  );
  if (response.status !== 200) return { ok: false, response };
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  const cookies = response.headers.getSetCookie();
  // The session cookie's prefix does not change the callback-url cookie's name.
  const name = authCookieNames(secure, '__Secure-').callbackUrl;
  const callbackUrl = setCookieValue(cookies, name) ?? parseCookies(cookie).get(name) ?? origin;
  return { ok: true, csrfToken, cookies, callbackUrl };
}

/**
 * The one place a request is handed to Auth.js: the Web Request built from Fastify's (unusable
 * callbackUrls dropped), the request's context for our callbacks, and Auth.js's answer passed
 * on, or ours when a callback interrupted it (throttle, load, database, bug).
 */
export function authjsBridge(options: AuthjsBridgeOptions) {
  return {
    answer: (request: FastifyRequest, reply: FastifyReply, route: BridgeRoute) =>
      answer(options, request, reply, route),
    csrfAction: (
      request: FastifyRequest,
      site: { origin: string; secure: boolean },
      url: string,
      cookie: string | undefined,
    ) => csrfAction(options, request, site, url, cookie),
  };
}

export type AuthjsBridge = ReturnType<typeof authjsBridge>;
