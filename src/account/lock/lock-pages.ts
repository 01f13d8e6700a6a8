import type { Notice } from '../../pages/notices.js';
import { mailedLinkNotice, textOf as text } from '../page-kit.js';
import { registerFlowPage, type FlowPages } from '../flow-page.js';
import { lockAccountAction } from './lock.js';
import { lockLinkLooksLive } from './lock-transaction.js';
import { pagePathsOf } from '../paths.js';
import { renderLockedPage, renderLockPage } from './lock-views.js';

/**
 * `GET|POST /account/lock` ("this wasn't me", no script): the notice's link shows a button; its
 * post runs the JSON route's action. The URL carries the secret.
 */
export function registerLockPages(pages: FlowPages): void {
  const { flow, kit } = pages;
  const { shell } = kit;
  const spentNotice: Notice = {
    tone: 'error',
    // Who unlocks and helps: SUPPORT_CONTACT when set, as on the lock page itself.
    text: `This link is not valid: it may have expired or been used already. If you still think someone else is using your account, contact ${shell.supportContact ?? 'your administrator'}.`,
  };
  registerFlowPage(pages, {
    path: pagePathsOf(kit.shell).lock,
    // The link is read, never used: one that can no longer be used says so at once, without
    // the button.
    show: async (view) => {
      const { token } = view;
      if (token === undefined) return renderLockPage(shell, { csrfToken: view.csrfToken });
      const live = await view.read(() => lockLinkLooksLive(flow.deps.db, token, flow.deps.now()));
      return live
        ? renderLockPage(shell, { csrfToken: view.csrfToken, token })
        : renderLockPage(shell, { csrfToken: view.csrfToken, notice: spentNotice });
    },
    action: lockAccountAction,
    done: () => renderLockedPage(shell),
    refused: (error, view) => {
      // A spent or wrong link cannot be posted again: the page explains, without the button.
      const spent = error.code === 'invalid_token';
      const notice: Notice = spent ? spentNotice : mailedLinkNotice(error);
      const token = spent ? undefined : text(view.body.token) || undefined;
      return renderLockPage(shell, { csrfToken: view.csrfToken, token, notice });
    },
  });
}
