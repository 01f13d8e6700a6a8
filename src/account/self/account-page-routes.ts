import { parseCookies } from '../../auth/cookies/cookies.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authBasePath } from '../../auth/bridge/auth-config.js';
import { suggestedAuthUrl } from '../../auth/signin/login-csrf-guard.js';
import type { PageViewOf } from '../../auth/bridge/routes.js';
import { HttpError } from '../../http/errors.js';
import type { Site } from '../../http/site.js';
import { sendWebResponse } from '../../http/web-bridge.js';
import {
  accountDoneNotice,
  doneParam,
  shownNotice,
  formOutcome,
  type AccountForm,
  type FormFailure,
} from '../../pages/account/account-notices.js';
import type { SentForm } from '../../pages/account/account-page.js';
import type { AccountPages, PageAnswer } from '../../pages/account/account-pages.js';
import { signOutDestination } from '../../pages/signin/destinations.js';
import { queryOf } from '../../pages/signin/form-post.js';
import type { Notice } from '../../pages/notices.js';
import type { AccountAction, AccountDeps, SignedIn } from '../action.js';
import type { Perform } from '../adapter.js';
import { plausibleNewEmail } from '../email/change-email.js';
import { changeEmailWithPassword } from './change-email-with-password.js';
import { changePassword } from './change-password.js';
import { resendVerification } from '../email/resend-verification.js';
import { updateProfile } from './profile.js';
import { ownHistory } from './list-events.js';
import { ownSessions, revokeOtherSessions, revokeOwnSession } from './sessions.js';
import { CsrfRefusal } from '../csrf-guard.js';
import type { Guards } from '../guards.js';
import { readBody } from '../request-body.js';
import type { PagePaths } from '../paths.js';
import { secondFactorsOf } from '../factors.js';
import { factorSummary } from '../totp/totp-store.js';
import {
  confirmTotp,
  disableTotpWithPassword,
  regenerateWithPassword,
  setupTotpWithPassword,
} from '../totp/page-actions.js';
import type { SecondFactorView } from '../../pages/account/account-page.js';
import { renamePasskey } from '../passkeys/actions.js';
import { createPasskeyStore } from '../passkeys/passkey-store.js';
import { removePasskeyWithPassword } from './remove-passkey-with-password.js';

/**
 * A form of the account page: a plain form post to `<the page>/<the JSON route>` that runs the
 * JSON route's own action, so both answer from one implementation.
 */
interface FormRoute {
  form: AccountForm;
  guard: 'session' | 'recent';
  action: AccountAction;
  /** The fields typed back into a refused form (never a password). */
  keep: readonly string[];
  /** The page's own check before the action: when it fails nothing is checked or counted. */
  precheck?: (body: Record<string, unknown>) => FormFailure | undefined;
  /** A mail flow: no form when mail is off. */
  needsMail?: boolean;
  /** The success notice's `done` value for the action's answer (default: the form's name). */
  doneOf?: (answer: unknown) => string;
  /** A second factor's form: no form when SECOND_FACTOR=off. */
  needsFactors?: boolean;
  /**
   * The answer is shown on the page itself rather than redirected to (a secret shown once: the
   * set-up's QR code, new recovery codes).
   */
  shows?: (answer: unknown) => Partial<SecondFactorView>;
}

/**
 * The repeated new password must match. Page-only: without script a person cannot see what
 * they typed, and without mail (or before the reset flow) a mistyped new password would lock
 * them out at their next sign-in. API clients send `newPassword` once.
 */
const repeated = (body: Record<string, unknown>): FormFailure | undefined =>
  body.newPasswordRepeat === body.newPassword
    ? undefined
    : { code: 'password_mismatch', message: 'The new passwords differ.' };

/** Every form of the account pages, read as a table (the mail flows add their pages next). */
const allForms: Record<string, FormRoute> = {
  '/profile': { form: 'profile', guard: 'session', action: updateProfile, keep: ['name'] },
  '/password/change': {
    form: 'password',
    guard: 'session',
    action: changePassword,
    keep: [],
    precheck: repeated,
  },
  '/email/verification': {
    form: 'verification',
    guard: 'session',
    action: resendVerification,
    keep: [],
    needsMail: true,
    doneOf: (answer) =>
      (answer as { status?: string }).status === 'already_verified' ? 'verified' : 'verification',
  },
  '/passkeys/rename': {
    form: 'passkey-rename',
    guard: 'session',
    action: renamePasskey,
    keep: ['id', 'name'],
  },
  '/passkeys/remove': {
    form: 'passkey-remove',
    guard: 'session',
    action: removePasskeyWithPassword,
    keep: ['id'],
  },
  '/email/change': {
    form: 'email',
    guard: 'session',
    action: changeEmailWithPassword,
    keep: ['email'],
    precheck: plausibleNewEmail,
    needsMail: true,
  },
  '/sessions/revoke-others': {
    form: 'sessions',
    guard: 'session',
    action: revokeOtherSessions,
    keep: [],
  },
  '/sessions/:id/revoke': {
    form: 'session',
    guard: 'session',
    action: revokeOwnSession,
    keep: [],
  },
  '/totp/setup': {
    form: 'totp_setup',
    guard: 'session',
    action: setupTotpWithPassword,
    keep: [],
    needsFactors: true,
    shows: (answer) => ({ enrolment: answer as { secret: string; qrSvg: string } }),
  },
  '/totp/confirm': {
    form: 'totp_confirm',
    guard: 'recent',
    action: confirmTotp,
    keep: [],
    needsFactors: true,
    shows: (answer) => ({ freshCodes: (answer as { recoveryCodes: string[] }).recoveryCodes }),
  },
  '/totp/disable': {
    form: 'totp_disable',
    guard: 'session',
    action: disableTotpWithPassword,
    keep: [],
    needsFactors: true,
  },
  '/recovery-codes': {
    form: 'recovery_codes',
    guard: 'session',
    action: regenerateWithPassword,
    keep: [],
    needsFactors: true,
    shows: (answer) => ({ freshCodes: (answer as { recoveryCodes: string[] }).recoveryCodes }),
  },
};

/** The account page's paths: the page, and its forms (those of a mail flow only with mail on). */
export const accountPagePaths = (pages: PagePaths, mail: boolean, factors = true): string[] => [
  pages.account,
  ...Object.entries(allForms)
    .filter(([, route]) => route.needsMail !== true || mail)
    .filter(([, route]) => route.needsFactors !== true || factors)
    .map(([path]) => `${pages.account}${path}`),
];

const statusOf = (failure: FormFailure) =>
  failure.code === 'password_mismatch' ? 422 : new HttpError(failure.code).status;

/** `Retry-After` as whole seconds, if it is that. */
function seconds(value: string | undefined): number | undefined {
  return value !== undefined && /^[0-9]{1,6}$/.test(value) ? Number(value) : undefined;
}

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

/**
 * `/account` and its forms, for browsers without script: GET shows the page with Auth.js's
 * CSRF token in every form; a form post (`application/x-www-form-urlencoded`) is checked as the
 * JSON routes check it (CSRF, then the guard), runs the same action, and answers 303 back to
 * the page with a notice (Post/Redirect/Get), or the page again with the error, its status and
 * the fields marked. Nobody signed in: 303 to the sign-in page, which comes back here.
 */
const sessionCookiePattern = /^(?:__Secure-|__Host-)?authjs\.session-token(?:\.\d+)?$/;

/** Whether the request carries a session cookie (valid or not). */
function holdsSessionCookie(request: FastifyRequest): boolean {
  return [...parseCookies(request.headers.cookie).keys()].some((name) =>
    sessionCookiePattern.test(name),
  );
}

export function registerAccountPages(site: Site, deps: AccountPageDeps): void {
  const { actionDeps, guards, pages } = deps;
  const accountPagePath = deps.pagePaths.account;
  const forms = Object.fromEntries(
    Object.entries(allForms)
      .filter(
        ([, route]) =>
          (route.needsMail !== true || actionDeps.mail !== undefined) &&
          (route.needsFactors !== true || actionDeps.totp !== undefined),
      )
      .map(([path, route]) => [`${accountPagePath}${path}`, route]),
  );

  // A browser that still holds a session cookie had a session that ended (signed out
  // elsewhere, a password reset, expiry): the sign-in page says so (Auth.js's SessionRequired)
  // instead of showing an empty form without a word.
  const toSignIn = (request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(303)
      .header(
        'location',
        `${deps.originOf(request)}${authBasePath}/signin?callbackUrl=${encodeURIComponent(accountPagePath)}${holdsSessionCookie(request) ? '&error=SessionRequired' : ''}`,
      )
      .send();

  /** The request's session and user, or null when nobody is signed in. */
  async function signedInOrNull(request: FastifyRequest): Promise<SignedIn | null> {
    try {
      return await guards.session(request);
    } catch (error) {
      if (error instanceof HttpError && error.code === 'unauthenticated') return null;
      throw error;
    }
  }

  /** The account page for `signedIn`, with a fresh form and what to say. */
  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    said: { notice: Notice | undefined; sent?: SentForm; shown?: Partial<SecondFactorView> },
    answer: PageAnswer,
  ): Promise<FastifyReply> {
    const user = await actionDeps.store.view(signedIn.user.id);
    if (user === null) return toSignIn(request, reply);
    const [sessions, events, factors, passkeys, recentUntil, totpRow] = await Promise.all([
      ownSessions(actionDeps, signedIn),
      ownHistory(actionDeps, signedIn.user.id),
      secondFactorsOf(actionDeps.factors, signedIn.user.id),
      createPasskeyStore(actionDeps.db).list(signedIn.user.id),
      actionDeps.recentUntil(signedIn.session.claims.sid),
      factorSummary(actionDeps.db, signedIn.user.id),
    ]);
    const secondFactor: SecondFactorView | undefined =
      actionDeps.totp === undefined && !factors.totp
        ? undefined
        : {
            offered: actionDeps.totp !== undefined,
            // A session from before SECOND_FACTOR=required, of an account without a factor.
            needed: actionDeps.totp?.mode === 'required' && !factors.totp && factors.passkeys === 0,
            totp: factors.totp,
            recoveryCodes: factors.recoveryCodes,
            codesFromSignIn: totpRow.codesMadeAtSignIn,
            ...said.shown,
          };
    const view = await deps.pageView(request, '');
    if (view instanceof Response) return sendWebResponse(reply, view);
    return pages.account(
      reply,
      {
        user,
        csrfToken: view.csrf.csrfToken,
        signOutUrl: signOutDestination(undefined, view.origin, authBasePath),
        passwordMinLength: actionDeps.passwordMinLength,
        mailEnabled: actionDeps.mail !== undefined,
        sessions,
        events,
        notice: said.notice,
        ...(said.sent !== undefined && { sent: said.sent }),
        secondFactor,
        passkeys,
        recent: recentUntil !== null && actionDeps.now() < recentUntil,
      },
      { ...answer, cookies: view.csrf.cookies },
    );
  }

  /**
   * A handler whose session or account read found the database busy or unreachable (503): the
   * busy page with the error's `Retry-After`, not the JSON error.
   */
  const orBusy =
    <A extends unknown[]>(
      handler: (request: FastifyRequest, reply: FastifyReply, ...rest: A) => Promise<FastifyReply>,
    ) =>
    async (request: FastifyRequest, reply: FastifyReply, ...rest: A) => {
      try {
        return await handler(request, reply, ...rest);
      } catch (error) {
        if (!(error instanceof HttpError) || error.status !== 503) throw error;
        return pages.busy(reply, error.headers);
      }
    };

  async function showPage(request: FastifyRequest, reply: FastifyReply) {
    const signedIn = await signedInOrNull(request);
    if (signedIn === null) return toSignIn(request, reply);
    const notice = accountDoneNotice(new URLSearchParams(queryOf(request.url)));
    return render(request, reply, signedIn, { notice }, { status: 200 });
  }

  /** What stands before the action: the CSRF check, then the page's own check, then the guard. */
  async function refusal(
    route: FormRoute,
    body: Record<string, unknown>,
    signedIn: SignedIn,
    csrf: CsrfRefusal | undefined,
  ): Promise<{ failure: FormFailure; headers?: Record<string, string> } | undefined> {
    if (csrf !== undefined) return { failure: { code: 'csrf', message: csrf.message } };
    const own = route.precheck?.(body);
    if (own !== undefined) return { failure: own };
    if (route.guard === 'recent') {
      try {
        await guards.recent(signedIn);
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        return { failure: { code: error.code, message: error.message, field: error.field } };
      }
    }
    return undefined;
  }

  async function postForm(request: FastifyRequest, reply: FastifyReply, route: FormRoute) {
    const body = readBody(request);
    let csrf: CsrfRefusal | undefined;
    try {
      deps.assertCsrf(request, body);
    } catch (error) {
      if (!(error instanceof CsrfRefusal)) throw error;
      if (error.reason === 'cross_site') {
        const publicOrigin = deps.originOf(request);
        request.log.warn(
          { path: request.routeOptions.url, origin: error.requestOrigin, publicOrigin },
          'an account form was refused as cross-site',
        );
        return pages.crossSite(reply, {
          requestOrigin: error.requestOrigin?.slice(0, shownOriginMaxLength),
          publicOrigin,
          suggestedAuthUrl: suggestedAuthUrl(error.requestOrigin),
        });
      }
      // A missing or stale token: the page again, with a fresh one, saying why.
      csrf = error;
    }
    const signedIn = await signedInOrNull(request);
    if (signedIn === null) return toSignIn(request, reply);
    let refused = await refusal(route, body, signedIn, csrf);
    if (refused === undefined) {
      try {
        const result = await deps.perform(route.action, request, reply, body, signedIn);
        if (route.shows !== undefined)
          return render(
            request,
            reply,
            signedIn,
            { notice: shownNotice(route.form), shown: route.shows(result.body) },
            { status: 200 },
          );
        const form = route.doneOf?.(result.body) ?? route.form;
        const done = `${deps.originOf(request)}${accountPagePath}?${doneParam}=${form}`;
        return reply.code(303).header('location', done).send();
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        if (error.code === 'unauthenticated') return toSignIn(request, reply);
        refused = {
          failure: {
            code: error.code,
            message: error.message,
            field: error.field,
            reason: error.reason,
            retryAfterSeconds: seconds(error.headers['retry-after']),
          },
          headers: error.headers,
        };
      }
    }
    const { notice, invalid } = formOutcome(route.form, refused.failure);
    const values = Object.fromEntries(
      route.keep.flatMap((field) => {
        const value = body[field];
        return typeof value === 'string' ? [[field, value]] : [];
      }),
    );
    return render(
      request,
      reply,
      signedIn,
      { notice, sent: { form: route.form, values, invalid } },
      { status: statusOf(refused.failure), headers: refused.headers ?? {} },
    );
  }

  site.declareRoutes({
    [accountPagePath]: ['GET', 'HEAD'],
    ...Object.fromEntries(Object.keys(forms).map((path) => [path, ['GET', 'HEAD', 'POST']])),
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
    const show = orBusy(showPage);
    const post = orBusy(postForm);
    scope.get(accountPagePath, show);
    for (const [path, route] of Object.entries(forms)) {
      scope.post(path, (request, reply) => post(request, reply, route));
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
