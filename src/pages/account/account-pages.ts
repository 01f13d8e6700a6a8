import type { FastifyReply } from 'fastify';
import { pageDefaults, type PageSettings } from '../../config/page-settings.js';
import { renderAccountPage, type AccountPageView } from './account-page.js';
import { paletteFor } from '../colour.js';
import { renderCrossSitePage, type CrossSiteView } from '../cross-site-page.js';
import { markup } from '../html.js';
import { createShell, renderDocument, renderNotice, type PageShell } from '../layout.js';
import type { Notice } from '../notices.js';
import { pagePolicy } from '../page-csp.js';
import { pageStyle } from '../page-style.js';
import { sendPage } from '../send-page.js';

export type { AccountPageView } from './account-page.js';

/** How a page is answered besides its HTML: status, headers (`Retry-After`), cookies. */
export interface PageAnswer {
  status: number;
  headers?: Record<string, string>;
  cookies?: readonly string[];
  /**
   * `same-origin` (the default) keeps the real `Origin` on the page's own form posts, which the
   * account's CSRF guard requires (a `no-referrer` page posts `Origin: null`, refused); a page
   * whose URL carries a secret (an e-mailed link) sends `no-referrer`, so that secret never
   * leaves in a `Referer`, and its form must be checked with that in mind.
   */
  referrerPolicy?: 'same-origin' | 'no-referrer';
}

/** The account pages (under ACCOUNT_PAGES_PATH, `/account` by default), answered with the sign-in page's look, CSP and caching rules. */
export interface AccountPages {
  /** The signed-in account page. */
  account(reply: FastifyReply, view: AccountPageView, answer: PageAnswer): FastifyReply;
  /** A form of these pages posted from another site (403): a page saying so, nothing done. */
  crossSite(reply: FastifyReply, view: Omit<CrossSiteView, 'action'>): FastifyReply;
  /** The service could not read the session or the account now (503, `Retry-After`). */
  busy(reply: FastifyReply, headers: Record<string, string>): FastifyReply;
}

const busyNotice: Notice = {
  tone: 'error',
  text: 'The service is busy right now and could not open your account, so nothing changed. Please try again in a few seconds.',
};

/**
 * The account pages, branded by `settings` (fixed at start-up) exactly as the sign-in page is:
 * the same stylesheet (so the same CSP hash), the same headers.
 */
export function createAccountPages(
  authBasePath: string,
  settings: PageSettings = pageDefaults,
): AccountPages {
  const style = pageStyle(paletteFor(settings.accentColor));
  const shell: PageShell = createShell(settings, style, authBasePath);
  const policy = pagePolicy(style, settings.logoUrl, settings.formTargets);

  function send(reply: FastifyReply, page: string, answer: PageAnswer): FastifyReply {
    return sendPage(reply, page, {
      status: answer.status,
      policy,
      referrer: answer.referrerPolicy ?? 'same-origin',
      cookies: answer.cookies,
      headers: answer.headers,
    });
  }

  return {
    account: (reply, view, answer) => send(reply, renderAccountPage(shell, view), answer),
    crossSite: (reply, view) =>
      send(reply, renderCrossSitePage(shell, { action: 'account', ...view }), { status: 403 }),
    busy: (reply, headers) => {
      const content = markup`${renderNotice(busyNotice)}
<a class="button" href="${shell.accountPath}">Try again</a>`;
      const page = renderDocument(shell, 'Your account', content, busyNotice);
      return send(reply, page, { status: 503, headers });
    },
  };
}
