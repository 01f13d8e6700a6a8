import { defaultAccountPagesPath } from '../config/page-settings.js';
import { markup, trustedHtml, type SafeHtml } from './html.js';
import type { Notice } from './notices.js';
import type { PageStyle } from './page-style.js';

/** What every page shares: the product's name, its logo, the stylesheet, where forms post. */
export interface PageShell {
  productName: string;
  logoUrl: string | undefined;
  style: PageStyle;
  /** Where Auth.js answers (`/api/auth`): the forms post there. */
  basePath: string;
  /** Every page's "Back to …" link (APP_URL, else SIGNED_IN_URL); undefined: none. */
  appUrl?: string | undefined;
  /** Where the end pages' "Sign in" leads: the app's sign-in page, or this service's. */
  signInUrl: string;
  /** SUPPORT_CONTACT: an https:// URL or an e-mail address. */
  supportContact?: string | undefined;
  /** Where the account pages live (ACCOUNT_PAGES_PATH): `/account` and the flows below it. */
  accountPath: string;
}

/** The shell of every page, from the page settings (fixed at start-up). */
export function createShell(
  settings: {
    productName: string;
    logoUrl: string | undefined;
    appUrl?: string | undefined;
    appSignInUrl?: string | undefined;
    supportContact?: string | undefined;
    accountPagesPath?: string | undefined;
  },
  style: PageStyle,
  basePath: string,
): PageShell {
  return {
    productName: settings.productName,
    logoUrl: settings.logoUrl,
    style,
    basePath,
    appUrl: settings.appUrl,
    signInUrl: settings.appSignInUrl ?? `${basePath}/signin`,
    supportContact: settings.supportContact,
    accountPath: settings.accountPagesPath ?? defaultAccountPagesPath,
  };
}

/** The support contact as a link: a web page, or a mail address. */
export function renderSupportContact(shell: PageShell): SafeHtml | undefined {
  const contact = shell.supportContact;
  if (contact === undefined) return undefined;
  return contact.startsWith('https://')
    ? markup`<a href="${contact}">support</a>`
    : markup`<a href="mailto:${contact}">${contact}</a>`;
}

/** The foot of every page: the way back to the app, and who to ask for help. */
function renderFoot(shell: PageShell): SafeHtml | undefined {
  const back =
    shell.appUrl !== undefined &&
    markup`<a href="${shell.appUrl}">Back to ${shell.productName}</a>`;
  const support = renderSupportContact(shell);
  const help = support !== undefined && markup`Need help? Contact ${support}`;
  if (back === false && help === false) return undefined;
  const between = back !== false && help !== false && markup`<span aria-hidden="true"> · </span>`;
  return markup`<footer class="foot">${back}${between}${help}</footer>
`;
}

/** The id of the notice, for `aria-describedby` on the controls it is about. */
export const noticeId = 'notice';

/** The notice box, or nothing: an alert for errors, a status for news. */
export function renderNotice(notice: Notice | undefined): SafeHtml | undefined {
  if (notice === undefined) return undefined;
  const role = notice.tone === 'error' ? 'alert' : 'status';
  return markup`<div id="${noticeId}" class="notice notice-${notice.tone}" role="${role}"><p>${notice.text}</p></div>`;
}

/** Who is signed in, as the pages say it: "Ada Lovelace (ada@example.com)", or the email alone. */
export interface SignedInUser {
  name: string;
  email: string;
}

/** "Signed in as <strong>Ada Lovelace</strong> (ada@example.com)". */
export function renderWho(user: SignedInUser): SafeHtml {
  const name = user.name.trim();
  return name === '' || name === user.email
    ? markup`Signed in as <strong>${user.email}</strong>`
    : markup`Signed in as <strong>${name}</strong> (${user.email})`;
}

/**
 * The sign-out button: Auth.js's own sign-out form (`csrfToken`, `callbackUrl`), posted as the
 * sign-out page posts it. `secondary` beside a primary action.
 */
export function renderSignOutForm(
  shell: PageShell,
  form: { csrfToken: string; callbackUrl: string; secondary?: boolean; describedBy?: string },
): SafeHtml {
  const kind = form.secondary === true && markup` class="secondary"`;
  const describedBy =
    form.describedBy !== undefined && markup` aria-describedby="${form.describedBy}"`;
  return markup`<form method="post" action="${shell.basePath}/signout">
<input type="hidden" name="csrfToken" value="${form.csrfToken}">
<input type="hidden" name="callbackUrl" value="${form.callbackUrl}">
<button type="submit"${kind}${describedBy}>Sign out</button>
</form>`;
}

/** The title: the heading, then the product's name unless the heading already says it. */
function titleOf(shell: PageShell, heading: string, notice: Notice | undefined): string {
  const error = notice?.tone === 'error' ? 'Error: ' : '';
  const named = heading.includes(shell.productName) ? heading : `${heading} – ${shell.productName}`;
  return `${error}${named}`;
}

/**
 * A whole page around its `<main>` content. No script but the passkeys' one (by its hash): the
 * pages work as plain forms, and their CSP allows no other. An error puts "Error:" first in the title, which is what a screen
 * reader announces first on arrival. The `<style>` element holds exactly the hashed stylesheet:
 * one more blank inside it and the CSP would refuse it.
 */
export function renderDocument(
  shell: PageShell,
  heading: string,
  content: SafeHtml,
  notice: Notice | undefined,
): string {
  const title = titleOf(shell, heading, notice);
  // The heading names the product, so the logo is decorative (alt="") and not read twice.
  const logo =
    shell.logoUrl === undefined
      ? undefined
      : markup`<img class="logo" src="${shell.logoUrl}" alt="">\n`;
  // Every page names the product it belongs to, above a heading that does not already.
  const brand =
    !heading.includes(shell.productName) && markup`<p class="brand">${shell.productName}</p>\n`;
  return markup`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${trustedHtml(shell.style.css)}</style>
</head>
<body>
<main aria-labelledby="page-title">
${logo}${brand}<h1 id="page-title">${heading}</h1>
${content}
${renderFoot(shell)}</main>
</body>
</html>
`.value;
}
