import type { FastifyInstance } from 'fastify';
import { HttpError } from '../../http/errors.js';
import type { Notice } from '../../pages/notices.js';
import type { FlowPorts } from '../adapter.js';
import {
  createPageKit,
  mailedLinkNotice,
  textOf as text,
  type PageKitSettings,
} from '../page-kit.js';
import { readBody } from '../request-body.js';
import { addressTakenMessage, confirmEmailRequest, type Confirmed } from './verify.js';
import {
  renderSignupConfirmedPage,
  renderVerifyDonePage,
  renderVerifyPage,
  verifyPagePath,
} from './verify-views.js';

/**
 * `GET|POST /account/email/verify` (verify or change e-mail, no script): the mail's link shows a
 * button, or the address-and-code form; its post runs the JSON route's action. The URL carries
 * the secret.
 */
export function registerVerifyPages(
  scope: FastifyInstance,
  flow: FlowPorts,
  settings: PageKitSettings,
): void {
  const { perform } = flow;
  const { shell, assertCsrf, csrfFor, send, answerHeaders, tokenOf } = createPageKit(settings);
  const noticeOf = mailedLinkNotice;

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
    let done: Confirmed;
    try {
      done = (await perform(confirmEmailRequest, request, reply, body)).body;
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
