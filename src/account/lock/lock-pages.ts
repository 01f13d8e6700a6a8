import type { FastifyInstance } from 'fastify';
import type { Notice } from '../../pages/notices.js';
import type { FlowPorts } from '../adapter.js';
import {
  createPageKit,
  mailedLinkNotice,
  textOf as text,
  type PageKitSettings,
} from '../page-kit.js';
import { registerFlowPage } from '../flow-page.js';
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
  const kit = createPageKit(settings);
  const { shell } = kit;
  registerFlowPage(scope, flow, kit, {
    path: lockPagePath,
    show: (view) => renderLockPage(shell, { csrfToken: view.csrfToken, token: view.token }),
    action: lockAccountAction,
    done: () => renderLockedPage(shell),
    refused: (error, view) => {
      // A spent or wrong link cannot be posted again: the page explains, without the button.
      const spent = error.code === 'invalid_token';
      const notice: Notice = spent
        ? {
            tone: 'error',
            text: 'This link is not valid: it may have expired or been used already. If you still think someone else is using your account, contact your administrator.',
          }
        : mailedLinkNotice(error);
      const token = spent ? undefined : text(view.body.token) || undefined;
      return renderLockPage(shell, { csrfToken: view.csrfToken, token, notice });
    },
  });
}
