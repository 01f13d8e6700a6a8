import { markup } from './html.js';
import { noticeId, renderDocument, renderNotice, type PageShell } from './layout.js';
import type { Notice } from './notices.js';

export interface SignInView {
  /** Auth.js's CSRF token, the pair of the double-submit cookie sent with the page. */
  csrfToken: string;
  callbackUrl: string;
  notice: Notice | undefined;
}

/**
 * The sign-in page: a plain form posting Auth.js's own field names (`csrfToken`, `email`,
 * `password`, `callbackUrl`) to Auth.js's credentials callback, so it works without script and
 * password managers recognise it. Focus starts in the email field, which the notice describes.
 */
export function renderSignInPage(shell: PageShell, view: SignInView): string {
  const { notice } = view;
  const describedBy = notice !== undefined && markup` aria-describedby="${noticeId}"`;
  const invalid = notice?.fieldsInvalid === true && markup` aria-invalid="true"`;
  const content = markup`${renderNotice(notice)}
<form method="post" action="${shell.basePath}/callback/credentials">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus${describedBy}${invalid}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${describedBy}${invalid}>
<button type="submit">Sign in</button>
</form>`;
  return renderDocument(shell, `Sign in to ${shell.productName}`, content, notice);
}
