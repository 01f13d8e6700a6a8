import { markup } from './html.js';
import { renderDocument, renderNotice, type PageShell } from './layout.js';
import type { Notice } from './notices.js';

/** What a cross-site refusal was about, as the login-CSRF guard (or the account's) saw it. */
export interface CrossSiteView {
  /** The sign-in or sign-out form, or a form of the account pages (`/account/…` by default). */
  action: 'signin' | 'signout' | 'account';
  /** The request's `Origin`, when it sent one. */
  requestOrigin: string | undefined;
  /** The public origin the request was compared with. */
  publicOrigin: string;
  /** The `AUTH_URL` that would make such a request this origin's own. */
  suggestedAuthUrl: string;
}

/**
 * A browser's sign-in or sign-out form post refused as cross-site (403): what happened in plain
 * words, for the person, and the setting to change, for whoever runs the service (usually the
 * same developer, the first time an app is put in front of Gatehouse). Values are printed
 * escaped; the link goes to the sign-in page (the account page, for its forms) on the origin
 * the browser used.
 */
export function renderCrossSitePage(shell: PageShell, view: CrossSiteView): string {
  const what = { signin: 'sign-in', signout: 'sign-out', account: 'account' }[view.action];
  const from =
    view.requestOrigin === undefined || view.requestOrigin === 'null'
      ? 'another site'
      : view.requestOrigin;
  const notice: Notice = {
    tone: 'error',
    text: `This ${what} form was sent from ${from}, but this service is at ${view.publicOrigin}. To keep accounts safe, forms from another site are refused, so nothing happened.`,
  };
  // `Origin: null`: the form's page withheld its origin (Referrer-Policy: no-referrer, a file).
  const hint =
    view.requestOrigin === 'null'
      ? markup`<p class="hint">If you run this service and this is your own app: the browser sent no origin because the form's page has <code>Referrer-Policy: no-referrer</code>. Serve it with <code>same-origin</code> or <code>strict-origin-when-cross-origin</code>, and set <code>AUTH_URL</code> to its origin.</p>`
      : markup`<p class="hint">If you run this service and this is your own app: set <code>AUTH_URL</code> to the origin the browser uses, e.g. <code>AUTH_URL=${view.suggestedAuthUrl}</code>, and restart it.</p>`;
  const content = markup`${renderNotice(notice)}
${hint}
${
  view.action === 'account'
    ? markup`<a class="button" href="${shell.accountPath}">Go to your account</a>`
    : markup`<a class="button" href="${shell.signInUrl}">Go to the sign-in page</a>`
}`;
  const heading = {
    signin: 'Sign-in refused',
    signout: 'Sign-out refused',
    account: 'Change refused',
  }[view.action];
  return renderDocument(shell, heading, content, notice);
}
