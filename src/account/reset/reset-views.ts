import { markup, type SafeHtml } from '../../pages/html.js';
import { noticeId, renderDocument, renderNotice, type PageShell } from '../../pages/layout.js';
import type { Notice } from '../../pages/notices.js';
import { renderNewPasswordFields } from '../../pages/new-password-fields.js';
import { pagePathsOf } from '../paths.js';
import { codeFormStart, codeInstead, keptValue } from '../page-kit.js';

const describedBy = (notice: Notice | undefined) =>
  notice !== undefined && markup` aria-describedby="${noticeId}"`;
const invalid = (notice: Notice | undefined) =>
  notice?.fieldsInvalid === true && markup` aria-invalid="true"`;

/** "Forgot your password?": one address field; the answer never says whether it has an account. */
export function renderForgotPage(
  shell: PageShell,
  view: { csrfToken: string; notice?: Notice | undefined; email?: string | undefined },
): string {
  const kept = keptValue(view.email);
  const content = markup`<p class="lead">Enter the address of your account and we'll mail you a link to choose a new password.</p>
${renderNotice(view.notice)}
<form method="post" action="${pagePathsOf(shell).forgot}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus${kept}${describedBy(view.notice)}${invalid(view.notice)}>
<button type="submit">Send the link</button>
</form>
<p class="hint"><a href="${shell.signInUrl}">Back to sign in</a></p>`;
  return renderDocument(shell, 'Reset your password', content, view.notice);
}

/** After "forgot": the same page for every address. */
export function renderForgotSentPage(shell: PageShell, view: { ttlMinutes: number }): string {
  const content = markup`<div class="notice notice-info" role="status"><p>If an account exists for that address, we've sent a link to it.</p></div>
<p>Open the link in the mail, or enter its code on the page it leads to. It works once, for ${String(view.ttlMinutes)} minutes. Nothing arrived? Check your spam folder, or ask again in a few minutes.</p>
<a class="button secondary" href="${shell.signInUrl}">Back to sign in</a>`;
  return renderDocument(shell, 'Check your mail', content, undefined);
}

/**
 * The link's page: the GET shows a form and uses nothing (a mail scanner that opens the link
 * spends no secret); the button posts the token with the new password. Without a token (or to
 * use the mailed code from another device) the address-and-code fields are shown.
 */
export function renderResetPage(
  shell: PageShell,
  view: {
    csrfToken: string;
    passwordMinLength: number;
    token?: string | undefined;
    /** The link's account address (a hidden username for password managers). */
    username?: string | undefined;
    email?: string | undefined;
    notice?: Notice | undefined;
    /** Which of the new password's fields the notice is about. */
    invalid?: readonly ('password' | 'repeat')[];
    /** The account asked for its second factor (a 401 or 403 to the last post). */
    secondFactor?: boolean;
  },
): string {
  const { notice } = view;
  // The app's code, or a recovery code in its place: asked only once the link was known good.
  const factorFields = (prefix: string) =>
    view.secondFactor === true &&
    markup`<label for="${prefix}otp">Code from your authenticator app</label>
<input id="${prefix}otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="7"${describedBy(notice)}>
<label for="${prefix}recoveryCode">Or a recovery code</label>
<input id="${prefix}recoveryCode" name="recoveryCode" type="text" autocomplete="off" autocapitalize="none" spellcheck="false">`;
  const passwordFields = (id: string, linkForm: boolean) =>
    renderNewPasswordFields({
      minLength: view.passwordMinLength,
      name: 'password',
      id,
      label: 'New password',
      username: linkForm ? view.username : undefined,
      invalid: linkForm === (view.token !== undefined) ? view.invalid : [],
      messageId: notice === undefined ? undefined : noticeId,
      autofocus: linkForm,
    });
  const kept = keptValue(view.email);
  const codeForm = (
    autofocus: boolean,
  ) => markup`${codeFormStart(pagePathsOf(shell).reset, view.csrfToken)}
<input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required${kept}${autofocus && markup` autofocus`}>
<label for="code">Code from the mail</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required${describedBy(notice)}>
${passwordFields('code-password', false)}
${factorFields('code-')}
<button type="submit">Set the new password</button>
</form>`;
  let content: SafeHtml;
  if (view.token !== undefined) {
    content = markup`${renderNotice(notice)}
<form method="post" action="${pagePathsOf(shell).reset}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="token" value="${view.token}">
${passwordFields('password', true)}
${factorFields('')}
<button type="submit">Set the new password</button>
</form>
${codeInstead(codeForm(false))}`;
  } else {
    content = markup`<p class="lead">Enter your address, the code from the mail and a new password.</p>
${renderNotice(notice)}
${codeForm(view.invalid === undefined || view.invalid.length === 0)}
<p class="hint"><a href="${pagePathsOf(shell).forgot}">Ask for a new mail</a></p>`;
  }
  return renderDocument(shell, 'Choose a new password', content, notice);
}

/** Done: nobody is signed in; every session ended. */
export function renderResetDonePage(shell: PageShell): string {
  const content = markup`<div class="notice notice-info" role="status"><p>Your password was changed, and every session of your account was signed out.</p></div>
<a class="button" href="${shell.signInUrl}">Sign in</a>`;
  return renderDocument(shell, 'Password changed — sign in', content, undefined);
}
