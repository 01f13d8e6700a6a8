import { Auth } from '@auth/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, HttpError } from '../../http/errors.js';
import { storeUnavailable } from '../../http/answer.js';
import { sendWebResponse, toWebRequest, webHeaders } from '../../http/web-bridge.js';
import type { Observer, SignInOutcome } from '../../observe/observer.js';
import type { PageCsrf } from '../../pages/signin/auth-pages.js';
import { withRetryAfter } from '../../pages/retry-after.js';
import { authBasePath, type AuthConfigFor } from './auth-config.js';
import {
  challengeCookieName as secondStepCookieName,
  challengeSetCookie,
  challengeTtlSeconds,
} from '../../pages/signin/second-step-cookie.js';
import { withUsableCallbackUrls } from '../cookies/callback-url.js';
import { authCookieNames, type SessionCookiePrefix } from '../cookies/cookie-names.js';
import {
  heldSessionToken,
  parseCookies,
  sessionTokenFrom,
  withoutCookies,
} from '../cookies/cookies.js';
import { deviceCookieName, deviceSetCookie } from '../cookies/device-cookie.js';
import type { AccountEventSink, PendingAccountEvent } from '../request/account-events.js';
import type { AuthRequestContext } from '../request/request-context.js';
import { originOf } from '../request/request-site.js';
import { challengeCookieName, clearChallenge } from './webauthn-challenge.js';

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
  /** Passkeys are served: the provider list names Auth.js's Passkey provider too. */
  passkeyProvider?: boolean;
  /**
   * A sign-in that enrolled TOTP (SECOND_FACTOR=required) and got Auth.js's redirect: the page
   * showing its recovery codes once, with the redirect's cookies; undefined: the redirect as is.
   */
  enrolled?: (
    reply: FastifyReply,
    response: Response,
    recoveryCodes: readonly string[],
  ) => Answer | undefined;
}

/**
 * Auth.js's provider list with its Passkey provider added, as Auth.js lists a WebAuthn provider
 * (`next-auth/webauthn`'s `signIn("passkey")` looks it up there before anything else).
 */
async function withPasskeyProvider(response: Response, origin: string): Promise<Response> {
  let providers: Record<string, unknown>;
  try {
    providers = (await response.clone().json()) as Record<string, unknown>;
  } catch {
    // No list to add to (a HEAD request's answer has no body): Auth.js's answer as it is.
    return response;
  }
  const base = `${origin}${authBasePath}`;
  providers.passkey = {
    id: 'passkey',
    name: 'Passkey',
    type: 'webauthn',
    signinUrl: `${base}/signin/passkey`,
    callbackUrl: `${base}/callback/passkey`,
  };
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(providers), { status: response.status, headers });
}

/** What a page needs to print its form, or Auth.js's own answer when it gave none. */
export type PageCsrfResult = ({ ok: true } & PageCsrf) | { ok: false; response: Response };

/**
 * Every token a request holds: each non-empty session cookie alone, Auth.js's join of them all,
 * and the join of the others without the session cookie itself (chunks of another session).
 */
function heldSessionTokens(cookies: Map<string, string>, name: string): string[] {
  const tokens = new Set<string>();
  const others = new Map<string, string>();
  for (const [cookieName, value] of cookies) {
    if (!cookieName.startsWith(name) || value === '') continue;
    tokens.add(value);
    if (cookieName !== name) others.set(cookieName, value);
  }
  for (const joined of [sessionTokenFrom(cookies, name), sessionTokenFrom(others, name)]) {
    if (joined !== undefined) tokens.add(joined);
  }
  return [...tokens];
}

/**
 * Auth.js's error page takes its status from the `error` it names: any client can ask for
 * `?error=Configuration` and get a 500. The page itself was served; the error it describes
 * happened to an earlier request, so it answers 200 here (a 5xx means this request failed).
 */
function servedPage(path: string, response: Response): Response {
  if (path !== `${authBasePath}/error` || response.status < 500) return response;
  return new Response(response.body, { status: 200, headers: response.headers });
}

/**
 * How a sign-in that went through Auth.js ended: our interruption if there was one, else the
 * error Auth.js reported (a refused CSRF token, wrong details), else what `authorize` decided.
 * Anything else (Auth.js failed after a success, or never asked) is a failure of ours.
 */
function signInOutcome(context: AuthRequestContext): SignInOutcome {
  const kind = context.interruption?.kind;
  if (kind !== undefined) return kind === 'internal' ? 'error' : kind;
  switch (context.authError) {
    case undefined:
      return context.signInResult === 'success' ? 'success' : 'error';
    case 'MissingCSRF':
      return 'csrf';
    case 'CredentialsSignin':
    case 'WebAuthnVerificationError':
      return context.signInResult === 'invalid' ? 'invalid' : 'error';
    default:
      return 'error';
  }
}

/**
 * Auth.js's answer to a sign-in that issued a session, with the device cookie added after its
 * own cookies (the same in both modes: only this bridge adds it).
 */
function withDeviceCookie(response: Response, value: string, secure: boolean): Response {
  return withCookie(response, deviceSetCookie(value, secure));
}

function withCookie(response: Response, setCookie: string): Response {
  const headers = new Headers(response.headers);
  headers.append('set-cookie', setCookie);
  return new Response(response.body, { status: response.status, headers });
}

/**
 * Auth.js's JSON answer (`{url}`) to a sign-in that enrolled TOTP, with the recovery codes it
 * made beside the url: the only time they are shown. Stock clients read `url` and ignore them.
 */
async function withRecoveryCodes(response: Response, codes: readonly string[]): Promise<Response> {
  let body: Record<string, unknown>;
  try {
    body = (await response.clone().json()) as Record<string, unknown>;
  } catch {
    // Not Auth.js's JSON answer: left as it is.
    return response;
  }
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify({ ...body, recoveryCodes: codes }), {
    status: response.status,
    headers,
  });
}

/** The second step's challenge set (after a right password) or cleared (after a sign-in). */
function withChallengeCookie(response: Response, value: string | null, secure: boolean): Response {
  const headers = new Headers(response.headers);
  headers.append(
    'set-cookie',
    challengeSetCookie(value ?? '', authBasePath, value === null ? 0 : challengeTtlSeconds, secure),
  );
  return new Response(response.body, { status: response.status, headers });
}

function setCookieValue(cookies: string[], name: string): string | undefined {
  const line = cookies.find((cookie) => cookie.startsWith(`${name}=`));
  if (line === undefined) return undefined;
  const end = line.indexOf(';');
  const raw = line.slice(name.length + 1, end === -1 ? undefined : end);
  try {
    return decodeURIComponent(raw);
  } catch {
    // Auth.js encodes what it sets; an undecodable value is not one of its.
    return undefined;
  }
}

/**
 * The one place a request is handed to Auth.js: the Web Request built from Fastify's (unusable
 * callbackUrls dropped), the request's context for our callbacks, and Auth.js's answer passed
 * on, or ours when a callback interrupted it (throttle, load, database, bug).
 */
export function authjsBridge(options: AuthjsBridgeOptions) {
  /**
   * The event goes to the record once the answer is out ('close' follows the last byte, or an
   * aborted answer): its database work never delays, or differs between, answers.
   */
  function noteAfterAnswer(
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

  return {
    /** The request as Auth.js sees it at `path` (the route, mapped); our interruptions answered. */
    async answer(
      request: FastifyRequest,
      reply: FastifyReply,
      route: {
        path: string;
        search: string;
        body: Buffer | undefined;
        secure: boolean;
        /** A passkey sign-in: the assertion is checked in place of a password. */
        passkey?: boolean;
      },
    ): Promise<FastifyReply> {
      const { path, secure } = route;
      const config = secure ? options.configs.https : options.configs.http;
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
      const url = `${origin}${path}${usable.search}`;
      const webRequest = toWebRequest(request, url, usable.body, headers);
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
      if (route.passkey === true) {
        context.passkey = {
          challengeCookie: cookies.get(challengeCookieName(secure)),
          secure,
        };
      }
      const signingIn =
        request.method === 'POST' && path === `${authBasePath}/callback/credentials`;
      const deviceCookie = signingIn ? cookies.get(deviceCookieName(secure)) : undefined;
      if (deviceCookie !== undefined) context.deviceCookie = deviceCookie;
      const challengeCookie = signingIn ? cookies.get(secondStepCookieName(secure)) : undefined;
      if (challengeCookie !== undefined && challengeCookie !== '')
        context.challengeCookie = challengeCookie;
      let response: Response;
      try {
        response = servedPage(path, await Auth(webRequest, config(context)));
        if (
          options.passkeyProvider === true &&
          path === `${authBasePath}/providers` &&
          response.status === 200
        ) {
          response = await withPasskeyProvider(response, origin);
        }
      } catch (error) {
        if (signingIn) options.observer.signIn('error');
        throw error;
      }
      // The challenge is spent whatever the outcome: Auth.js clears its cookie after use too.
      if (route.passkey === true) response = withCookie(response, clearChallenge(secure));
      let event = context.accountEvent;
      let enrolledPage: (() => Answer | undefined) | undefined;
      if (signingIn) {
        const outcome = signInOutcome(context);
        options.observer.signIn(outcome);
        if (outcome === 'success' && context.issuedDeviceCookie !== undefined) {
          response = withDeviceCookie(response, context.issuedDeviceCookie, secure);
        }
        if (context.issuedChallenge !== undefined)
          response = withChallengeCookie(response, context.issuedChallenge, secure);
        else if (outcome === 'success' && context.challengeCookie !== undefined)
          response = withChallengeCookie(response, null, secure);
        const codes = context.recoveryCodes;
        if (outcome === 'success' && codes !== undefined) {
          if (response.headers.get('content-type')?.startsWith('application/json'))
            response = await withRecoveryCodes(response, codes);
          else if (response.status === 302) {
            const redirect = response;
            enrolledPage = () => options.enrolled?.(reply, redirect, codes);
          }
        }
        const userId = context.verifiedCredential?.userId;
        if (outcome === 'success' && userId !== undefined) {
          event = {
            type: 'signin',
            userId,
            ...(route.passkey === true && { detail: { method: 'passkey' } }),
          };
        }
      }
      if (event !== undefined) noteAfterAnswer(request, reply, event);
      return enrolledPage?.() ?? answerInterruption(request, reply, context, response);
    },

    /**
     * Auth.js's own CSRF action at `url` for these cookies: the token, the cookies it set, and
     * the callback URL it settled on (it sets the callback-url cookie whenever its choice
     * differs from the one held). Anything but a token comes back to be passed on unchanged.
     */
    async csrfAction(
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
    },
  };
}

export type AuthjsBridge = ReturnType<typeof authjsBridge>;
