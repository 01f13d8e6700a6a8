import type { FastifyInstance } from 'fastify';
import { HttpError } from '../http/errors.js';
import type { Notice } from '../pages/notices.js';
import { formatWait } from '../pages/notices.js';
import { lockPagePath, renderLockedPage, renderLockPage } from '../pages/lock-pages.js';
import { renderSignupConfirmedPage } from '../pages/signup-pages.js';
import { renderVerifyDonePage, renderVerifyPage, verifyPagePath } from '../pages/verify-pages.js';
import {
  forgotPagePath,
  renderForgotPage,
  renderForgotSentPage,
  renderResetDonePage,
  renderResetPage,
  resetPagePath,
} from '../pages/reset-pages.js';
import type { AccountDeps } from './action.js';
import { runAction } from './action.js';
import { forgotPassword } from './actions/forgot-password.js';
import { lockAccountAction } from './actions/lock-account.js';
import { resetPasswordAction } from './actions/reset-password.js';
import { addressTakenMessage, confirmEmailRequest } from './actions/verify-email.js';
import { createPageKit, textOf as text, type PageKitSettings } from './page-kit.js';
import { readBody } from './request-body.js';

export const resetPagePaths = [forgotPagePath, resetPagePath, lockPagePath, verifyPagePath];

export interface ResetPageSettings extends PageKitSettings {
  mailTokenTtlSeconds: number;
}

/**
 * The mailed-link pages (no script): `GET|POST /account/password/forgot`,
 * `GET|POST /account/password/reset`, `GET|POST /account/lock` ("this wasn't me") and
 * `GET|POST /account/email/verify` (verify or change e-mail). Their posts run the same actions
 * as the JSON routes. The reset, lock and verify pages carry a secret in
 * their URL, so they send `Referrer-Policy: no-referrer`;
 * browsers then post its form with `Origin: null`, which is taken as this site's only together
 * with `Sec-Fetch-Site: same-origin` (a foreign or opaque origin stays refused). CSRF: the
 * Auth.js double-submit pair every account POST carries, made here when the browser holds none.
 */
export function registerResetPages(
  scope: FastifyInstance,
  deps: AccountDeps,
  settings: ResetPageSettings,
): void {
  const { shell, assertCsrf, csrfFor, send, answerHeaders, tokenOf } = createPageKit(settings);

  const noticeOf = (error: HttpError): Notice => ({
    tone: 'error',
    text:
      error.code === 'rate_limited'
        ? `Too many attempts. Try again in ${formatWait(Number(error.headers['retry-after'] ?? 60))}.`
        : error.code === 'invalid_token'
          ? 'This link or code is not valid: it may have expired or been used already. Ask for a new mail.'
          : error.message,
    fieldsInvalid: error.code === 'weak_password' || error.code === 'invalid_field',
  });

  scope.get(forgotPagePath, async (request, reply) => {
    const csrf = csrfFor(request);
    return send(reply, 200, renderForgotPage(shell, { csrfToken: csrf.token }), {
      cookie: csrf.cookie,
      referrer: 'same-origin',
    });
  });

  scope.post(forgotPagePath, async (request, reply) => {
    const body = readBody(request);
    assertCsrf(request, body);
    const csrf = csrfFor(request);
    try {
      await runAction(forgotPassword, deps, { request, reply, body });
    } catch (error) {
      if (!(error instanceof HttpError) || error.status >= 500) throw error;
      const html = renderForgotPage(shell, {
        csrfToken: csrf.token,
        notice: noticeOf(error),
        email: text(body.email),
      });
      return send(reply, error.status, html, {
        cookie: csrf.cookie,
        referrer: 'same-origin',
        headers: answerHeaders(error),
      });
    }
    const ttlMinutes = Math.round(settings.mailTokenTtlSeconds / 60);
    return send(reply, 200, renderForgotSentPage(shell, { ttlMinutes }), {
      cookie: csrf.cookie,
      referrer: 'same-origin',
    });
  });

  scope.get(resetPagePath, async (request, reply) => {
    const csrf = csrfFor(request);
    const token = tokenOf(request);
    const html = renderResetPage(shell, { csrfToken: csrf.token, token });
    return send(reply, 200, html, { cookie: csrf.cookie });
  });

  scope.post(resetPagePath, async (request, reply) => {
    const body = readBody(request);
    assertCsrf(request, body);
    const csrf = csrfFor(request);
    try {
      await runAction(resetPasswordAction, deps, { request, reply, body });
    } catch (error) {
      if (!(error instanceof HttpError) || error.status >= 500) throw error;
      // A weak password keeps the link; a spent or wrong one leaves the code form.
      const token = error.code === 'invalid_token' ? undefined : text(body.token) || undefined;
      const html = renderResetPage(shell, {
        csrfToken: csrf.token,
        token,
        email: text(body.email),
        notice: noticeOf(error),
      });
      return send(reply, error.status, html, {
        cookie: csrf.cookie,
        headers: answerHeaders(error),
      });
    }
    return send(reply, 200, renderResetDonePage(shell), { cookie: csrf.cookie });
  });

  scope.get(lockPagePath, async (request, reply) => {
    const csrf = csrfFor(request);
    const token = tokenOf(request);
    const html = renderLockPage(shell, { csrfToken: csrf.token, token });
    return send(reply, 200, html, { cookie: csrf.cookie });
  });

  scope.post(lockPagePath, async (request, reply) => {
    const body = readBody(request);
    assertCsrf(request, body);
    const csrf = csrfFor(request);
    try {
      await runAction(lockAccountAction, deps, { request, reply, body });
    } catch (error) {
      if (!(error instanceof HttpError) || error.status >= 500) throw error;
      // A spent or wrong link cannot be posted again: the page explains, without the button.
      const token = error.code === 'invalid_token' ? undefined : text(body.token) || undefined;
      const notice: Notice =
        error.code === 'invalid_token'
          ? {
              tone: 'error',
              text: 'This link is not valid: it may have expired or been used already. If you still think someone else is using your account, contact your administrator.',
            }
          : noticeOf(error);
      const html = renderLockPage(shell, { csrfToken: csrf.token, token, notice });
      return send(reply, error.status, html, {
        cookie: csrf.cookie,
        headers: answerHeaders(error),
      });
    }
    return send(reply, 200, renderLockedPage(shell), { cookie: csrf.cookie });
  });

  scope.get(verifyPagePath, async (request, reply) => {
    const csrf = csrfFor(request);
    const token = tokenOf(request);
    const html = renderVerifyPage(shell, { csrfToken: csrf.token, token });
    return send(reply, 200, html, { cookie: csrf.cookie });
  });

  scope.post(verifyPagePath, async (request, reply) => {
    const body = readBody(request);
    assertCsrf(request, body);
    const csrf = csrfFor(request);
    let done: Awaited<ReturnType<typeof confirmEmailRequest>>;
    try {
      done = (await runAction(confirmEmailRequest, deps, { request, reply, body })) as typeof done;
    } catch (error) {
      if (!(error instanceof HttpError) || error.status >= 500) throw error;
      // A spent or wrong secret leaves the code form, saying what to do next.
      const notice: Notice =
        error.code !== 'invalid_token'
          ? noticeOf(error)
          : {
              tone: 'error',
              text:
                error.reason === 'address_taken'
                  ? `${addressTakenMessage} Choose another address on your account page.`
                  : 'This link or code is not valid: it may have expired or been used already. Sign in and ask for a new mail on your account page.',
            };
      const html = renderVerifyPage(shell, {
        csrfToken: csrf.token,
        email: text(body.email),
        notice,
      });
      return send(reply, error.status, html, {
        cookie: csrf.cookie,
        headers: answerHeaders(error),
      });
    }
    // A sign-up's secret needs its password, which this page's forms do not send: a post that
    // carries one anyway made the account, and the sign-up's own page says so.
    const html =
      done.outcome === 'created'
        ? renderSignupConfirmedPage(shell, { email: done.email })
        : renderVerifyDonePage(shell, { outcome: done.outcome, email: done.email });
    return send(reply, 200, html, { cookie: csrf.cookie });
  });
}
