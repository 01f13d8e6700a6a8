import { markup, type SafeHtml } from '../../pages/html.js';
import { noticeId, renderDocument, renderNotice, type PageShell } from '../../pages/layout.js';
import type { Notice } from '../../pages/notices.js';
import { pagePathsOf } from '../paths.js';
import { codeFormStart, codeInstead, keptValue } from '../page-kit.js';

const describedBy = (notice: Notice | undefined) =>
  notice !== undefined && markup` aria-describedby="${noticeId}"`;

/**
 * The link's page: the GET shows one button and uses nothing (a mail scanner that opens the
 * link confirms nothing); the button posts the token. Without a token (or to use the mailed code
 * on another device) the address-and-code form: the address is the one the mail went to, the new
 * one for an address change.
 */
export function renderVerifyPage(
  shell: PageShell,
  view: {
    csrfToken: string;
    token?: string | undefined;
    /** What the link's secret is for (an address change moves an account here). */
    purpose?: 'verify' | 'email_change' | undefined;
    email?: string | undefined;
    notice?: Notice | undefined;
  },
): string {
  const { notice } = view;
  const kept = keptValue(view.email);
  const codeForm = (
    autofocus: boolean,
  ) => markup`${codeFormStart(pagePathsOf(shell).verify, view.csrfToken)}
<p id="email-hint" class="hint field-hint">The address the mail came to.</p>
<input id="email" name="email" type="email" autocomplete="email" autocapitalize="none" spellcheck="false" required aria-describedby="email-hint"${kept}${autofocus && markup` autofocus`}>
<label for="code">Code from the mail</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required${describedBy(notice)}>
<button type="submit">Confirm with the code</button>
</form>`;
  let content: SafeHtml;
  if (view.token !== undefined) {
    const lead =
      view.purpose === 'email_change'
        ? markup`<p class="lead">Press the button to move an account to this address.</p>
<p>From then on the account signs in with this address, and its mail comes here. If you did not ask for that, close this page: nothing changes.</p>`
        : markup`<p class="lead">Press the button to confirm that this address is yours.</p>`;
    content = markup`${lead}
${renderNotice(notice)}
<form method="post" action="${pagePathsOf(shell).verify}">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="token" value="${view.token}">
<button type="submit" autofocus>Confirm my address</button>
</form>
${codeInstead(codeForm(false))}`;
  } else {
    content = markup`<p class="lead">Enter the address the mail came to and the code in it.</p>
${renderNotice(notice)}
${codeForm(true)}
<p class="hint">No mail, or the link expired? Sign in and ask for a new one on <a href="${pagePathsOf(shell).account}">your account page</a>.</p>`;
  }
  return renderDocument(shell, 'Confirm your address', content, notice);
}

/** Done: the address is confirmed, or is now the account's address. */
export function renderVerifyDonePage(
  shell: PageShell,
  view: { outcome: 'verified' | 'changed'; email: string },
): string {
  const content =
    view.outcome === 'verified'
      ? markup`<div class="notice notice-info" role="status"><p>Thank you: ${view.email} is confirmed as your address.</p></div>
<a class="button" href="${pagePathsOf(shell).account}">Go to your account</a>`
      : markup`<div class="notice notice-info" role="status"><p>Your address is now ${view.email}.</p></div>
<p>Sign in with it from now on. Your sessions on other devices were signed out, and your old address got a notice of the change.</p>
<a class="button" href="${pagePathsOf(shell).account}">Go to your account</a>`;
  const title = view.outcome === 'verified' ? 'Address confirmed' : 'Address changed';
  return renderDocument(shell, title, content, undefined);
}

/** Done: the account exists, its address confirmed; it signs in with the password chosen. */
export function renderSignupConfirmedPage(shell: PageShell, view: { email: string }): string {
  const content = markup`<div class="notice notice-info" role="status"><p>Your account for <strong>${view.email}</strong> is ready, and its address is confirmed.</p></div>
<p>Sign in with your address and the password you chose.</p>
<a class="button" href="${shell.signInUrl}">Sign in</a>`;
  return renderDocument(shell, 'Account created', content, undefined);
}

/**
 * The page after a mailed secret was used: the sign-up's account made, or the address
 * verified or changed (a verification's or an address change's code typed on the sign-up's
 * page did its own work).
 */
export const renderConfirmedPage = (
  shell: PageShell,
  done: { outcome: 'verified' | 'changed' | 'created'; email: string },
): string =>
  done.outcome === 'created'
    ? renderSignupConfirmedPage(shell, { email: done.email })
    : renderVerifyDonePage(shell, { outcome: done.outcome, email: done.email });
