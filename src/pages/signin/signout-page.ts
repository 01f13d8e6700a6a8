import { markup } from '../html.js';
import { noticeId, renderDocument, renderNotice, renderSignOutForm, renderWho } from '../layout.js';
import type { PageShell, SignedInUser } from '../layout.js';
import type { Notice } from '../notices.js';

export interface SignOutView {
  csrfToken: string;
  /** Where Auth.js sends the browser once signed out. */
  callbackUrl: string;
  notice: Notice | undefined;
  /**
   * Who is signed in: `null` when nobody is (the page says so instead of asking), `undefined`
   * when the service could not tell (the page asks, as the sign-out itself still works).
   */
  signedIn?: SignedInUser | null | undefined;
}

const leadId = 'lead';

/**
 * The sign-out confirmation: one button posting Auth.js's sign-out form (`csrfToken`,
 * `callbackUrl`). Showing it signs nobody out; the POST is Auth.js's, unchanged. "Stay signed in"
 * leads back: to the app (APP_URL), else to the account page, which exists for every signed-in
 * person. With no session, there is nothing to confirm: the page says so and links to the
 * sign-in page.
 */
export function renderSignOutPage(shell: PageShell, view: SignOutView): string {
  const { notice, signedIn } = view;
  if (signedIn === null && notice === undefined) {
    const content = markup`<p class="lead">There is nothing to sign out of.</p>
<a class="button" href="${shell.signInUrl}">Sign in</a>`;
    return renderDocument(shell, 'You are not signed in', content, undefined);
  }
  const describedBy = notice === undefined ? leadId : `${leadId} ${noticeId}`;
  const who = signedIn ? markup`${renderWho(signedIn)}. ` : undefined;
  const content = markup`<p id="${leadId}" class="lead">${who}You will need to sign in again to continue.</p>
${renderNotice(notice)}
${renderSignOutForm(shell, { csrfToken: view.csrfToken, callbackUrl: view.callbackUrl, describedBy })}
<a class="button secondary" href="${shell.appUrl ?? shell.accountPath}">Stay signed in</a>`;
  return renderDocument(shell, `Sign out of ${shell.productName}?`, content, notice);
}
