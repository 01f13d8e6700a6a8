import { markup } from './html.js';
import { noticeId, renderDocument, renderNotice, type PageShell } from './layout.js';
import type { Notice } from './notices.js';

export interface SignOutView {
  csrfToken: string;
  /** Where Auth.js sends the browser once signed out. */
  callbackUrl: string;
  notice: Notice | undefined;
}

const leadId = 'lead';

/**
 * The sign-out confirmation: one button posting Auth.js's sign-out form (`csrfToken`,
 * `callbackUrl`). Showing it signs nobody out; the POST is Auth.js's, unchanged.
 */
export function renderSignOutPage(shell: PageShell, view: SignOutView): string {
  const { notice } = view;
  const describedBy = notice === undefined ? leadId : `${leadId} ${noticeId}`;
  const content = markup`<p id="${leadId}" class="lead">You will need to sign in again to continue.</p>
${renderNotice(notice)}
<form method="post" action="${shell.basePath}/signout">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">
<button type="submit" aria-describedby="${describedBy}">Sign out</button>
</form>`;
  return renderDocument(shell, `Sign out of ${shell.productName}?`, content, notice);
}
