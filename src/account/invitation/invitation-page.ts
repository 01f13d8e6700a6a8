import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../http/errors.js';
import {
  invitationPath,
  renderInvitationAcceptedPage,
  renderInvitationInvalidPage,
  renderInvitationPage,
} from './invitation-views.js';
import { formatWait, type Notice } from '../../pages/notices.js';
import { answer } from '../action.js';
import { refuseSecret } from '../attempts.js';
import type { FlowPorts } from '../adapter.js';
import { acceptInvitationAction } from './accept.js';
import { findLiveInvitation } from './invitations.js';
import { createPageKit, type PageKitSettings } from '../page-kit.js';
import { readBody } from '../request-body.js';

const tooMany = (error: HttpError): Notice => ({
  tone: 'error',
  text: `Too many attempts. Try again in ${formatWait(Number(error.headers['retry-after'] ?? 60))}.`,
});

/**
 * `GET|POST /account/invitation`: an invitation's link (no script). The GET looks the
 * invitation up and uses nothing, so a mail scanner that opens the link spends nothing; a link
 * that cannot be used (unknown, used, expired, replaced, its address taken) gets a page saying
 * so and what to do, and counts as a failed attempt from the address, as the route's refusal
 * does. The button posts to the same address, which runs the JSON route's action. The page
 * exists with mail off: `gatehouse users invite --print-link` needs no mail.
 */
export function registerInvitationPages(
  scope: FastifyInstance,
  flow: FlowPorts,
  settings: PageKitSettings,
): void {
  const { deps: deps, perform } = flow;
  const kit = createPageKit(settings);
  const { shell } = kit;
  const invalidPage = (notice?: Notice) => renderInvitationInvalidPage(shell, { notice });
  // A database that cannot answer now is the catalogue's 503, as for the actions.
  const lookUp = async (request: FastifyRequest, reply: FastifyReply, token: string | undefined) =>
    (
      await perform(
        async () =>
          answer(token === undefined ? null : await findLiveInvitation(deps.db, token, deps.now())),
        request,
        reply,
        {},
      )
    ).body;

  scope.get(invitationPath, async (request, reply) => {
    const csrf = kit.csrfFor(request);
    const token = kit.tokenOf(request);
    const invitation = await lookUp(request, reply, token);
    if (invitation === null) {
      // Counted as the route's refusal is: a failed attempt from the address.
      const refusal = await refuseSecret(deps.throttle, deps.now(), { ip: request.ip }).catch(
        (error: unknown) => error,
      );
      if (refusal instanceof HttpError && refusal.code === 'rate_limited')
        return kit.send(reply, 429, invalidPage(tooMany(refusal)), {
          headers: kit.answerHeaders(refusal),
        });
      if (!(refusal instanceof HttpError)) throw refusal;
      return kit.send(reply, 400, invalidPage());
    }
    const html = renderInvitationPage(shell, {
      csrfToken: csrf.token,
      token: token ?? '',
      email: invitation.email,
      name: invitation.name ?? '',
      passwordMinLength: deps.passwordMinLength,
    });
    return kit.send(reply, 200, html, { cookie: csrf.cookie });
  });

  scope.post(invitationPath, async (request, reply) => {
    const body = readBody(request);
    kit.assertCsrf(request, body);
    const csrf = kit.csrfFor(request);
    const token = typeof body.token === 'string' ? body.token : '';
    // For the pages only (the address to show); the action decides on its own.
    const invitation = await lookUp(request, reply, token);
    try {
      await perform(acceptInvitationAction, request, reply, body);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      if (error.code === 'rate_limited')
        return kit.send(reply, 429, invalidPage(tooMany(error)), {
          headers: kit.answerHeaders(error),
        });
      if (error.code === 'invalid_token' || invitation === null) {
        if (error.status >= 500) throw error;
        return kit.send(reply, 400, invalidPage());
      }
      // The form again with the problem (a weak password, a name out of bounds, busy).
      const html = renderInvitationPage(shell, {
        csrfToken: csrf.token,
        token,
        email: invitation.email,
        name: typeof body.name === 'string' ? body.name : (invitation.name ?? ''),
        passwordMinLength: deps.passwordMinLength,
        notice: {
          tone: 'error',
          text: error.message,
          fieldsInvalid: error.code === 'weak_password',
        },
      });
      return kit.send(reply, error.status, html, {
        cookie: csrf.cookie,
        headers: kit.answerHeaders(error),
      });
    }
    const html = renderInvitationAcceptedPage(shell, { email: invitation?.email ?? '' });
    return kit.send(reply, 200, html, { cookie: csrf.cookie });
  });
}
