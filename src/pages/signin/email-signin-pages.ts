import { markup, type SafeHtml } from '../html.js';
import { noticeId, renderDocument, renderNotice, type PageShell } from '../layout.js';
import type { Notice } from '../notices.js';

/*
 * The pages of a sign-in by e-mail (src/account/email-signin/), no script: "check your inbox"
 * with the code form (Auth.js's verify-request page), and the mailed link's page, whose GET uses
 * nothing and whose one button signs in. The code form is the sign-in page's too, after a wrong
 * code. Every form posts Auth.js's credentials fields to its e-mail callback.
 */

/** The code form: the address (kept by the browser that asked, else typed) and the code. */
export interface CodeFormView {
  csrfToken: string;
  /** Where the sign-in lands; undefined: Auth.js's callback-url cookie decides. */
  callbackUrl?: string | undefined;
  /** The address this browser asked a mail for; undefined: a field to type it in. */
  email?: string | undefined;
  /** A code was just refused: the field is marked. */
  invalid?: boolean;
}

export function renderCodeForm(shell: PageShell, view: CodeFormView): SafeHtml {
  const callback =
    view.callbackUrl !== undefined &&
    markup`
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">`;
  const address =
    view.email === undefined
      ? markup`<label for="codeEmail">Email the code was sent to</label>
<input id="codeEmail" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required>`
      : markup`<input type="hidden" name="email" value="${view.email}">`;
  const marked = view.invalid === true && markup` aria-invalid="true"`;
  return markup`<form method="post" action="${shell.basePath}/callback/email">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">${callback}
${address}
<label for="mailCode">Code from the mail</label>
<input id="mailCode" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="16" required autofocus aria-describedby="${noticeId}"${marked}>
<button type="submit">Sign in with the code</button>
</form>`;
}

/**
 * "Check your inbox", where Auth.js's e-mail provider sends the browser once the mail is asked
 * for. It says the same for every address (the request's answer did): a mail is on its way if
 * the address can sign in here.
 */
export function renderCheckInboxPage(shell: PageShell, view: CodeFormView): string {
  const to =
    view.email === undefined
      ? markup`the address you typed`
      : markup`<strong>${view.email}</strong>`;
  const notice: Notice = {
    tone: 'info',
    text: 'Open the link in the mail on any device, or type its code here.',
  };
  const content = markup`<p class="lead">If ${to} can sign in here, a mail with a sign-in link and a code is on its way to it.</p>
${renderNotice(notice)}
${renderCodeForm(shell, view)}
<p class="hint">No mail after a few minutes? Look in your spam folder, or ask again. If you asked more than once, any of the mails works (a code only in the browser that asked for it).<br><a href="${shell.signInUrl}">Use another address or your password</a></p>`;
  return renderDocument(shell, 'Check your inbox', content, undefined);
}

/** The mailed link's page: its secret as read (never used), or why it cannot be used. */
export type MailedLinkView =
  | {
      csrfToken: string;
      token: string;
      callbackUrl: string | undefined;
      /** The address the mail went to. */
      email: string;
      /** The link makes the account (no account had the address when it was mailed). */
      newAccount: boolean;
    }
  | { spent: true };

/**
 * A mail scanner that opens the link spends nothing: only the button's post signs in, and only
 * the browser that presses it.
 */
export function renderMailedLinkPage(shell: PageShell, view: MailedLinkView): string {
  if ('spent' in view) {
    const notice: Notice = {
      tone: 'error',
      text: 'This sign-in link can no longer be used: it expired, was used already, or your account changed since it was sent.',
    };
    const content = markup`${renderNotice(notice)}
<a class="button" href="${shell.signInUrl}">Ask for a new link</a>`;
    return renderDocument(shell, 'Sign-in link not valid', content, notice);
  }
  const what = view.newAccount
    ? markup`Press the button to create your ${shell.productName} account for <strong>${view.email}</strong> and sign in.`
    : markup`Press the button to sign in as <strong>${view.email}</strong>.`;
  const callback =
    view.callbackUrl !== undefined &&
    markup`
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">`;
  const content = markup`<p class="lead">${what}</p>
<form method="post" action="${shell.basePath}/callback/email">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="token" value="${view.token}">${callback}
<button type="submit">${view.newAccount ? 'Create my account and sign in' : 'Sign in'}</button>
</form>
<p class="hint">The link works once. If you did not ask to sign in, close this page: nothing happens without the button.</p>`;
  return renderDocument(shell, `Sign in to ${shell.productName}`, content, undefined);
}
