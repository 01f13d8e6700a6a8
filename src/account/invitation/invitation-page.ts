import { HttpError } from '../../http/errors.js';
import {
  renderInvitationAcceptedPage,
  renderInvitationInvalidPage,
  renderInvitationPage,
} from './invitation-views.js';
import { formatWait, type Notice } from '../../pages/notices.js';
import { refuseSecret } from '../attempts.js';
import { acceptInvitationAction } from './accept.js';
import { findLiveInvitation } from './invitations.js';
import { newPasswordInvalid, repeatedPassword, textOf as text } from '../page-kit.js';
import { pagePathsOf } from '../paths.js';
import { registerFlowPage, type FlowPages, type PageView } from '../flow-page.js';

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
export function registerInvitationPages(pages: FlowPages): void {
  const { deps } = pages.flow;
  const { kit } = pages;
  const { shell } = kit;
  const invalid = (status: number, notice?: Notice, headers?: Record<string, string>) => ({
    status,
    html: renderInvitationInvalidPage(shell, { notice }),
    noForm: true as const,
    ...(headers && { headers }),
  });
  const tooManyPage = (error: HttpError) => invalid(429, tooMany(error), kit.answerHeaders(error));
  const lookUp = (view: PageView, token: string | undefined) =>
    view.read(async () =>
      token === undefined ? null : findLiveInvitation(deps.db, token, deps.now()),
    );

  registerFlowPage(pages, {
    path: pagePathsOf(kit.shell).invitation,
    show: async (view) => {
      const invitation = await lookUp(view, view.token);
      if (invitation === null) {
        // Counted as the route's refusal is: a failed attempt from the address.
        const refusal = await refuseSecret(deps.throttle, deps.now(), { ip: view.ip }).catch(
          (error: unknown) => error,
        );
        if (refusal instanceof HttpError && refusal.code === 'rate_limited')
          return tooManyPage(refusal);
        if (!(refusal instanceof HttpError)) throw refusal;
        return invalid(400);
      }
      return renderInvitationPage(shell, {
        csrfToken: view.csrfToken,
        token: view.token ?? '',
        email: invitation.email,
        name: invitation.name ?? '',
        passwordMinLength: deps.passwordMinLength,
      });
    },
    // For the pages only (the address to show); the action decides on its own.
    before: (view) => lookUp(view, text(view.body.token) ?? ''),
    precheck: repeatedPassword('password'),
    action: acceptInvitationAction,
    done: (_body, _view, invitation) =>
      renderInvitationAcceptedPage(shell, { email: invitation?.email ?? '' }),
    // The form again with a busy service's words too, not the error handler's.
    rendersBusy: true,
    refused: (error, view, invitation) => {
      if (error.code === 'rate_limited') return tooManyPage(error);
      if (error.code === 'invalid_token' || invitation === null) {
        if (error.status >= 500) throw error;
        return invalid(400);
      }
      // The form again with the problem (a weak password, a name out of bounds, busy).
      return renderInvitationPage(shell, {
        csrfToken: view.csrfToken,
        token: text(view.body.token) ?? '',
        email: invitation.email,
        name: text(view.body.name) ?? invitation.name ?? '',
        passwordMinLength: deps.passwordMinLength,
        notice: { tone: 'error', text: error.message },
        invalid: newPasswordInvalid(error),
      });
    },
  });
}
