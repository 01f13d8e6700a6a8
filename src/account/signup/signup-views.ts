import { markup, type SafeHtml } from '../../pages/html.js';
import { noticeId, renderDocument, renderNotice, type PageShell } from '../../pages/layout.js';
import type { Notice } from '../../pages/notices.js';
import { pagePathsOf } from '../paths.js';
import { renderNewPasswordFields } from '../../pages/new-password-fields.js';

/** Which field a refusal is about, so only that one is marked invalid. */
export type SignupField = 'email' | 'name' | 'password' | 'passwordRepeat';

export interface SignupView {
  csrfToken: string;
  passwordMinLength: number;
  notice?: Notice | undefined;
  /** The field the notice is about (marked invalid, and focused). */
  field?: SignupField | undefined;
  /** What was typed, kept after a refusal (never the password). */
  email?: string | undefined;
  name?: string | undefined;
}

/**
 * "Create an account": address, name and password, a plain form posting to itself. The answer
 * never says whether the address had an account (src/account/signup/signup.ts); only refusals
 * that are the same for every address (a malformed field, a weak password, too many tries) come
 * back here, in words, with the field they are about marked.
 */
export function renderSignupPage(shell: PageShell, view: SignupView): string {
  const { notice, field } = view;
  const state = (name: SignupField, describedBy?: string) => {
    const ids = [
      ...(notice !== undefined && field === name ? [noticeId] : []),
      ...(describedBy === undefined ? [] : [describedBy]),
    ];
    return markup`${ids.length > 0 && markup` aria-describedby="${ids.join(' ')}"`}${
      notice !== undefined && field === name && markup` aria-invalid="true" autofocus`
    }`;
  };
  const first = (field === undefined || notice === undefined) && markup` autofocus`;
  const email = view.email !== undefined && markup` value="${view.email}"`;
  const name = view.name !== undefined && markup` value="${view.name}"`;
  const content = markup`<p class="lead">We'll mail you a link to confirm your address.</p>
${renderNotice(notice)}
<form method="post" action="${pagePathsOf(shell).signup}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required${email}${first}${state('email')}>
<label for="name">Name</label>
<input id="name" name="name" type="text" autocomplete="name" maxlength="200" required${name}${state('name')}>
${renderNewPasswordFields({
  minLength: view.passwordMinLength,
  name: 'password',
  label: 'Password',
  invalid:
    notice === undefined
      ? []
      : field === 'passwordRepeat'
        ? ['password', 'repeat']
        : field === 'password'
          ? ['password']
          : [],
  messageId: noticeId,
})}
<button type="submit">Create the account</button>
</form>
<p class="hint">Have an account? <a href="${shell.signInUrl}">Sign in</a></p>`;
  return renderDocument(shell, 'Create an account', content, notice);
}

/** After a sign-up: the same page for every address, new, taken or disabled. */
export function renderSignupSentPage(
  shell: PageShell,
  view: { email: string; ttlMinutes: number },
): string {
  const content = markup`<div class="notice notice-info" role="status"><p>We've sent a mail to <strong>${view.email}</strong>.</p></div>
<p>Open the link in it to confirm your address, or enter its code on the page it leads to. The link works once, for ${String(view.ttlMinutes)} minutes. If you already had an account, the mail says so instead, and tells you how to get back in.</p>
<p class="hint">Nothing new arrived? After several sign-ups for one address we wait a while before mailing it again: any "Confirm your address" mail already there works just as well. Check your spam folder too.</p>
<a class="button secondary" href="${shell.signInUrl}">Back to sign in</a>`;
  return renderDocument(shell, 'Check your inbox', content, undefined);
}

/** SIGNUP=closed: nothing to fill in, and who to ask instead. */
export function renderSignupClosedPage(shell: PageShell): string {
  const content = markup`<div class="notice notice-info" role="status"><p>${shell.productName} does not take sign-ups. To get an account, ask your administrator for an invitation.</p></div>
<a class="button secondary" href="${shell.signInUrl}">Back to sign in</a>`;
  return renderDocument(shell, 'Sign-up is closed', content, undefined);
}

export interface SignupConfirmView {
  csrfToken: string;
  passwordMinLength: number;
  /** The link's secret; absent: the code form (another device, or a spent link). */
  token?: string | undefined;
  /** The address signed up with, when the link names a pending sign-up (for password managers). */
  email?: string | undefined;
  notice?: Notice | undefined;
  /** Which of the new password's fields the notice is about (marked invalid, and focused). */
  passwordInvalid?: readonly ('password' | 'repeat')[] | undefined;
  /** The name typed, kept after a refusal. */
  name?: string | undefined;
}

/**
 * The sign-up's link page: whoever holds the mailbox chooses the account's password here (the
 * link or code came through it, which is the proof), so every sign-up mail serves the owner of
 * the address, also one a stranger asked for. The GET uses nothing (a mail scanner that opens
 * the link makes nothing). Without a token, the address-and-code form, with the same fields.
 */
export function renderSignupConfirmPage(shell: PageShell, view: SignupConfirmView): string {
  const { notice } = view;
  const invalid = notice === undefined ? [] : (view.passwordInvalid ?? []);
  const name = view.name !== undefined && markup` value="${view.name}"`;
  const choose = (focus: boolean) =>
    markup`<label for="name">Your name <span class="hint">(optional)</span></label>
<p id="signup-name-hint" class="hint field-hint">Leave it blank to keep the name given when signing up.</p>
<input id="name" name="name" type="text" autocomplete="name" maxlength="200" aria-describedby="signup-name-hint"${name}>
${renderNewPasswordFields({
  minLength: view.passwordMinLength,
  name: 'password',
  label: 'Password',
  invalid,
  messageId: noticeId,
  autofocus: focus,
  ...(view.token !== undefined && view.email !== undefined && { username: view.email }),
})}`;
  const kept = view.email !== undefined && markup` value="${view.email}"`;
  let content: SafeHtml;
  if (view.token !== undefined) {
    content = markup`<p class="lead">One step left: choose the password of ${view.email === undefined ? 'your new account' : markup`the account for <strong>${view.email}</strong>`}.</p>
${renderNotice(notice)}
<form method="post" action="${pagePathsOf(shell).signupConfirm}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="token" value="${view.token}">
${choose(invalid.length === 0)}
<button type="submit">Create the account</button>
</form>
<p class="hint">Did not ask for an account? Ignore the mail: nothing is made unless someone opens this link from your mailbox and chooses a password.</p>`;
  } else {
    content = markup`<p class="lead">Enter the address the mail came to and the code in it, then choose your password.</p>
${renderNotice(notice)}
<form method="post" action="${pagePathsOf(shell).signupConfirm}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required${kept}${invalid.length === 0 && markup` autofocus`}>
<label for="code">Code from the mail</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required>
${choose(false)}
<button type="submit">Create the account</button>
</form>
<p class="hint">No mail, or the link expired? <a href="${pagePathsOf(shell).signup}">Sign up again</a>.</p>`;
  }
  return renderDocument(shell, 'Confirm your address', content, notice);
}
