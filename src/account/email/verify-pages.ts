import type { Notice } from '../../pages/notices.js';
import { mailedLinkNotice, textOf as text } from '../page-kit.js';
import { registerFlowPage, type FlowPages } from '../flow-page.js';
import { mailedLinkPurpose } from './confirmation.js';
import { addressTakenMessage, confirmEmailRequest } from './verify-address.js';
import { pagePathsOf } from '../paths.js';
import { renderConfirmedPage, renderVerifyPage } from './verify-views.js';

const spentLinkNotice: Notice = {
  tone: 'error',
  text: 'This link or code is not valid: it may have expired or been used already. Sign in and ask for a new mail on your account page.',
};

/**
 * `GET|POST /account/email/verify` (verify or change e-mail, no script): the mail's link shows a
 * button, or the address-and-code form; its post runs the JSON route's action. The URL carries
 * the secret.
 */
export function registerVerifyPages(pages: FlowPages): void {
  const { flow, kit } = pages;
  const { shell } = kit;
  registerFlowPage(pages, {
    path: pagePathsOf(kit.shell).verify,
    // The link's purpose is read, never used: an address change says that an account will
    // move to this address, and a link that can no longer be used says so before anything is
    // typed or pressed.
    show: async (view) => {
      const { token } = view;
      if (token === undefined) return renderVerifyPage(shell, { csrfToken: view.csrfToken });
      const purpose = await view.read(() =>
        mailedLinkPurpose(flow.deps.db, token, flow.deps.now()),
      );
      if (purpose === null)
        return renderVerifyPage(shell, { csrfToken: view.csrfToken, notice: spentLinkNotice });
      return renderVerifyPage(shell, { csrfToken: view.csrfToken, token, purpose });
    },
    action: confirmEmailRequest,
    // A sign-up's secret needs its password, which this page's forms do not send: a post that
    // carries one anyway made the account, and the sign-up's own page says so.
    done: (done) => renderConfirmedPage(shell, done),
    refused: (error, view) => {
      // A spent or wrong secret leaves the code form, saying what to do next.
      const notice: Notice =
        error.code !== 'invalid_token'
          ? mailedLinkNotice(error)
          : {
              tone: 'error',
              text:
                error.reason === 'address_taken'
                  ? `${addressTakenMessage} Choose another address on your account page.`
                  : spentLinkNotice.text,
            };
      return renderVerifyPage(shell, {
        csrfToken: view.csrfToken,
        email: text(view.body.email),
        notice,
      });
    },
  });
}
