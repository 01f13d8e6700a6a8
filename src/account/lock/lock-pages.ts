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
import { lockAccountAction } from './lock.js';
import { lockPagePath, renderLockedPage, renderLockPage } from './lock-views.js';

/**
 * `GET|POST /account/lock` ("this wasn't me", no script): the notice's link shows a button; its
 * post runs the JSON route's action. The URL carries the secret.
 */
export function registerLockPages(
  scope: FastifyInstance,
  flow: FlowPorts,
  settings: PageKitSettings,
): void {
  const { perform } = flow;
  const { shell, assertCsrf, csrfFor, send, answerHeaders, tokenOf } = createPageKit(settings);
  const noticeOf = mailedLinkNotice;

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
      await perform(lockAccountAction, request, reply, body);
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
}
