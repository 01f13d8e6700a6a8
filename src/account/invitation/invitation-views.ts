import { markup } from '../../pages/html.js';
import { noticeId, renderDocument, renderNotice, type PageShell } from '../../pages/layout.js';
import type { Notice } from '../../pages/notices.js';
import { pagePathsOf } from '../paths.js';
import { renderNewPasswordFields } from '../../pages/new-password-fields.js';

/**
 * "Create your account": "You're invited to <product> as <address>", a name (the operator's,
 * editable) and a password. The GET shows it and uses nothing (a mail scanner that opens the
 * link spends no invitation); the button posts the token with the fields.
 */
export function renderInvitationPage(
  shell: PageShell,
  view: {
    csrfToken: string;
    token: string;
    email: string;
    name: string;
    passwordMinLength: number;
    notice?: Notice | undefined;
    /** Which of the new password's fields the notice is about. */
    invalid?: readonly ('password' | 'repeat')[];
  },
): string {
  const { notice } = view;
  // The username beside the new password lets a password manager file it under the address.
  const content = markup`<p class="lead">You're invited to ${shell.productName} as <strong>${view.email}</strong>. Choose your name and a password.</p>
${renderNotice(notice)}
<form method="post" action="${pagePathsOf(shell).invitation}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="token" value="${view.token}">
<label for="name">Name</label>
<input id="name" name="name" type="text" autocomplete="name" maxlength="200" value="${view.name}">
${renderNewPasswordFields({
  minLength: view.passwordMinLength,
  username: view.email,
  name: 'password',
  label: 'Password',
  invalid: view.invalid,
  messageId: notice === undefined ? undefined : noticeId,
  autofocus: true,
})}
<button type="submit">Create my account</button>
</form>
<p class="hint">The invitation works once. Already accepted it? <a href="${shell.signInUrl}">Sign in</a></p>`;
  return renderDocument(shell, 'Create your account', content, notice);
}

/** Done: the account exists, nobody is signed in yet. */
export function renderInvitationAcceptedPage(shell: PageShell, view: { email: string }): string {
  const content = markup`<div class="notice notice-info" role="status"><p>Your account is ready.</p></div>
<p>Sign in as <strong>${view.email}</strong> with the password you just chose.</p>
<a class="button" href="${shell.signInUrl}">Sign in</a>`;
  return renderDocument(shell, 'Account created — sign in', content, undefined);
}

/**
 * A link that cannot be used: unknown, used, expired, replaced by a newer invitation, or its
 * address taken meanwhile (one page for all: the link's holder learns nothing more), or too
 * many tries (`notice` says when to try again).
 */
export function renderInvitationInvalidPage(
  shell: PageShell,
  view: { notice?: Notice | undefined },
): string {
  const notice: Notice = view.notice ?? {
    tone: 'error',
    text: 'The link may have been used already, have expired, or been replaced by a newer invitation.',
  };
  const content = markup`${renderNotice(notice)}
<p>If you already accepted it, sign in with the address it was sent to. Otherwise, ask the person who invited you to send a new invitation.</p>
<a class="button secondary" href="${shell.signInUrl}">Sign in</a>`;
  return renderDocument(shell, 'This invitation cannot be used', content, notice);
}
