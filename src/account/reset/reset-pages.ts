import type { FastifyInstance } from 'fastify';
import { HttpError } from '../../http/errors.js';
import type { FlowPorts } from '../adapter.js';
import {
  createPageKit,
  mailedLinkNotice,
  textOf as text,
  type PageKitSettings,
} from '../page-kit.js';
import { readBody } from '../request-body.js';
import { forgotPassword } from './forgot.js';
import { resetPasswordAction } from './reset.js';
import {
  forgotPagePath,
  renderForgotPage,
  renderForgotSentPage,
  renderResetDonePage,
  renderResetPage,
  resetPagePath,
} from './reset-views.js';

export interface ResetPageSettings extends PageKitSettings {
  mailTokenTtlSeconds: number;
}

/*
 * Pages that carry a mailed secret in their URL send `Referrer-Policy: no-referrer`; browsers
 * then post their form with `Origin: null`, which is taken as this site's only together with
 * `Sec-Fetch-Site: same-origin` (a foreign or opaque origin stays refused). CSRF: the Auth.js
 * double-submit pair every account POST carries, made here when the browser holds none
 * (src/account/page-kit.ts).
 */

/**
 * `GET|POST /account/password/forgot` and `GET|POST /account/password/reset` (no script): their
 * posts run the JSON routes' actions. The reset page's URL carries the secret.
 */
export function registerResetPages(
  scope: FastifyInstance,
  flow: FlowPorts,
  settings: ResetPageSettings,
): void {
  const { perform } = flow;
  const { shell, assertCsrf, csrfFor, send, answerHeaders, tokenOf } = createPageKit(settings);
  const noticeOf = mailedLinkNotice;

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
      await perform(forgotPassword, request, reply, body);
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
      await perform(resetPasswordAction, request, reply, body);
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
}
