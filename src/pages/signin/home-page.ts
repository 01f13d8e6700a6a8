import { markup } from '../html.js';
import {
  renderDocument,
  renderSignOutForm,
  renderWho,
  type PageShell,
  type SignedInUser,
} from '../layout.js';

export interface HomeView {
  user: SignedInUser;
  /** Auth.js's CSRF token for the sign-out form. */
  csrfToken: string;
  /** Where sign-out ends: the sign-in page's "You have signed out". */
  signOutUrl: string;
}

const whoId = 'who';

/**
 * `/` for a signed-in visitor: who they are, a link to their account (`/account`) and a
 * sign-out button. The product's name is the heading.
 */
export function renderHomePage(shell: PageShell, view: HomeView): string {
  const content = markup`<p id="${whoId}" class="who">${renderWho(view.user)}</p>
<a class="button" href="${shell.accountPath}">Your account</a>
${renderSignOutForm(shell, { csrfToken: view.csrfToken, callbackUrl: view.signOutUrl, secondary: true, describedBy: whoId })}`;
  return renderDocument(shell, shell.productName, content, undefined);
}
