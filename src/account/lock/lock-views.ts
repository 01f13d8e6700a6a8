import { markup } from '../../pages/html.js';
import {
  renderDocument,
  renderNotice,
  renderSupportContact,
  type PageShell,
} from '../../pages/layout.js';
import type { Notice } from '../../pages/notices.js';
import { pagePathsOf } from '../paths.js';

/** Who unlocks an account: SUPPORT_CONTACT when set, else "your administrator". */
const contact = (shell: PageShell) => renderSupportContact(shell) ?? markup`your administrator`;

/**
 * "Lock your account?": what a lock does, and one button. The GET uses nothing (a mail scanner
 * that opens the link locks nobody out); only the button's post does. Without a token (a link
 * cut short) there is nothing to post, so no button.
 */
export function renderLockPage(
  shell: PageShell,
  view: { csrfToken: string; token?: string | undefined; notice?: Notice | undefined },
): string {
  const form =
    view.token !== undefined &&
    markup`<form method="post" action="${pagePathsOf(shell).lock}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="token" value="${view.token}">
<button type="submit">Lock my account</button>
</form>`;
  const notice =
    view.notice ??
    (view.token === undefined
      ? {
          tone: 'error' as const,
          text: 'This link is not complete. Open the link in the mail again.',
        }
      : undefined);
  const content = markup`<p class="lead">If you did not make the change the mail told you about, someone else may have your password or your mail. Locking your account stops them.</p>
${renderNotice(notice)}
<p>Every session of your account is signed out at once, on every device, and nobody can sign in, you included, until an administrator unlocks it. Contact ${contact(shell)} afterwards to get your account back.</p>
${form}
<p class="hint"><a href="${shell.signInUrl}">It was me: back to sign in</a></p>`;
  return renderDocument(shell, 'Lock your account?', content, notice);
}

/** Done: the account is disabled and every session ended. */
export function renderLockedPage(shell: PageShell): string {
  const content = markup`<div class="notice notice-info" role="status"><p>Your account is locked, and every session of it was signed out.</p></div>
<p>Nobody can sign in to it now. To use it again, contact ${contact(shell)}: they can check what happened and unlock it for you.</p>`;
  return renderDocument(shell, 'Your account is locked', content, undefined);
}
