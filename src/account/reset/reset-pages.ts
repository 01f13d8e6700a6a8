import {
  mailedLinkNotice,
  newPasswordInvalid,
  repeatedPassword,
  textOf as text,
  type PageKitSettings,
} from '../page-kit.js';
import { registerFlowPage, type FlowPages } from '../flow-page.js';
import { HttpError } from '../../http/errors.js';
import { forgotPassword } from './forgot.js';
import { resetPasswordAction } from './reset.js';
import { liveResetLinkEmail } from './reset-transaction.js';
import { pagePathsOf } from '../paths.js';
import {
  renderForgotPage,
  renderForgotSentPage,
  renderResetDonePage,
  renderResetPage,
} from './reset-views.js';

export interface ResetPageSettings extends PageKitSettings {
  mailTokenTtlSeconds: number;
}

/*
 * Pages that carry a mailed secret in their URL send `Referrer-Policy: no-referrer`; browsers
 * then post their form with `Origin: null`, which is taken as this site's only together with
 * `Sec-Fetch-Site: same-origin` (a foreign or opaque origin stays refused). CSRF: the Auth.js
 * double-submit pair every account POST carries, made here when the browser holds none
 * (src/account/page-kit.ts).
 */

/**
 * `GET|POST /account/password/forgot` and `GET|POST /account/password/reset` (no script): their
 * posts run the JSON routes' actions. The reset page's URL carries the secret.
 */
export function registerResetPages(pages: FlowPages<ResetPageSettings>): void {
  const { flow, settings, kit } = pages;
  const { shell } = kit;
  registerFlowPage(pages, {
    path: pagePathsOf(kit.shell).forgot,
    // No secret in this page's URL: the referrer may name the page to this site.
    referrer: 'same-origin',
    show: (view) => renderForgotPage(shell, { csrfToken: view.csrfToken }),
    action: forgotPassword,
    done: () =>
      renderForgotSentPage(shell, { ttlMinutes: Math.round(settings.mailTokenTtlSeconds / 60) }),
    refused: (error, view) =>
      renderForgotPage(shell, {
        csrfToken: view.csrfToken,
        notice: mailedLinkNotice(error),
        email: text(view.body.email),
      }),
  });
  const form = { passwordMinLength: flow.deps.passwordMinLength };
  registerFlowPage(pages, {
    path: pagePathsOf(kit.shell).reset,
    // The link is read, never used: one that can no longer be used says so before a new
    // password is typed, and a live one names its account for password managers.
    show: async (view) => {
      const { token } = view;
      if (token === undefined)
        return renderResetPage(shell, { ...form, csrfToken: view.csrfToken });
      const email = await view.read(() => liveResetLinkEmail(flow.deps.db, token, flow.deps.now()));
      if (email === null)
        return renderResetPage(shell, {
          ...form,
          csrfToken: view.csrfToken,
          notice: mailedLinkNotice(new HttpError('invalid_token')),
        });
      return renderResetPage(shell, {
        ...form,
        csrfToken: view.csrfToken,
        token,
        username: email,
      });
    },
    precheck: repeatedPassword('password'),
    action: resetPasswordAction,
    done: () => renderResetDonePage(shell),
    refused: (error, view) =>
      renderResetPage(shell, {
        ...form,
        csrfToken: view.csrfToken,
        // A weak password keeps the link; a spent or wrong one leaves the code form.
        token: error.code === 'invalid_token' ? undefined : text(view.body.token) || undefined,
        username: text(view.body.username),
        email: text(view.body.email),
        notice: mailedLinkNotice(error),
        invalid: newPasswordInvalid(error),
        secondFactor:
          error.code === 'second_factor_required' || error.code === 'second_factor_invalid',
      }),
  });
}
