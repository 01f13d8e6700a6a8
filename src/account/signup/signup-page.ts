import { HttpError } from '../../http/errors.js';
import { formatWait, type Notice } from '../../pages/notices.js';
import {
  renderSignupClosedPage,
  renderSignupConfirmPage,
  renderSignupPage,
  renderSignupSentPage,
  type SignupField,
} from './signup-views.js';
import { renderConfirmedPage } from '../email/verify-views.js';
import { readEmail } from '../../users/email.js';
import { signUpAction, signupLinkTtlSeconds } from './signup.js';
import { confirmEmailRequest } from '../email/verify-address.js';
import { findPendingSignup } from '../email/signup-confirmation.js';
import {
  passwordMismatchReason,
  newPasswordInvalid,
  repeatedPassword,
  textOf as text,
  type PageKitSettings,
} from '../page-kit.js';
import { pagePathsOf } from '../paths.js';
import { registerFlowPage, type FlowPages } from '../flow-page.js';

export interface SignupPageSettings extends PageKitSettings {
  passwordMinLength: number;
}

/** A refusal in words, and the field it is about. */
function refusalOf(error: HttpError): { notice: Notice; field?: SignupField } {
  const notice = (text: string): Notice => ({ tone: 'error', text });
  switch (error.code) {
    case 'weak_password':
      return { notice: notice(error.message), field: 'password' };
    case 'rate_limited':
      return {
        notice: notice(
          `Too many sign-ups from here or for this address. Try again in ${formatWait(Number(error.headers['retry-after'] ?? 60))}.`,
        ),
      };
    case 'invalid_field':
      if (error.reason === passwordMismatchReason)
        return { notice: notice(error.message), field: 'passwordRepeat' };
      if (error.field === 'name')
        return {
          notice: notice('Enter your name: up to 200 characters, on one line.'),
          field: 'name',
        };
      if (error.field === 'password')
        return { notice: notice('Enter a password.'), field: 'password' };
      return {
        notice: notice('Enter a valid email address, like ada@example.com.'),
        field: 'email',
      };
    default:
      return { notice: notice(error.message) };
  }
}

/** A refusal at the confirm page in words, and which new-password fields it is about. */
function confirmRefusalOf(error: HttpError): {
  notice: Notice;
  passwordInvalid: ('password' | 'repeat')[];
} {
  const notice = (text: string): Notice => ({ tone: 'error', text });
  switch (error.code) {
    case 'weak_password':
      return { notice: notice(error.message), passwordInvalid: ['password'] };
    case 'invalid_field':
      return error.field === 'name'
        ? { notice: notice(error.message), passwordInvalid: [] }
        : { notice: notice(error.message), passwordInvalid: newPasswordInvalid(error) };
    case 'rate_limited':
      return {
        notice: notice(
          `Too many attempts. Try again in ${formatWait(Number(error.headers['retry-after'] ?? 60))}.`,
        ),
        passwordInvalid: [],
      };
    case 'invalid_token':
      return {
        notice: notice(
          'This link or code is not valid: it may have expired, been used already, or the address has an account by now. Sign up again, or sign in.',
        ),
        passwordInvalid: [],
      };
    default:
      return { notice: notice(error.message), passwordInvalid: [] };
  }
}

/**
 * `GET|POST /account/signup` (no script): the form, and its post running the JSON route's
 * action. Every address that gets past the checks lands on the same "check your inbox" page;
 * a refusal shows the form again with the reason in words. SIGNUP=closed: a page that says so
 * (403), with nothing to fill in. `GET|POST /account/signup/confirm`: the mail's link page,
 * where whoever holds the mailbox chooses the account's password (and name); its post runs
 * `POST /api/account/email/verify`'s action, and on success offers sign-in (no session is made). Its URL carries a secret, so it
 * sends `Referrer-Policy: no-referrer`.
 */
export function registerSignupPages(pages: FlowPages<SignupPageSettings>): void {
  const { settings, kit } = pages;
  const { deps } = pages.flow;
  const { shell } = kit;
  const closed = () => (deps.signupOpen ? null : renderSignupClosedPage(shell));
  const form = { passwordMinLength: settings.passwordMinLength };

  registerFlowPage(pages, {
    path: pagePathsOf(kit.shell).signup,
    // Not a page with a secret in it: the referrer may name the page to this site.
    referrer: 'same-origin',
    closed,
    show: (view) => renderSignupPage(shell, { ...form, csrfToken: view.csrfToken }),
    precheck: repeatedPassword('password'),
    action: signUpAction,
    // The action checked the address; the page names it as the mail's recipient.
    done: (_body, view) =>
      renderSignupSentPage(shell, {
        email: readEmail(text(view.body.email) ?? '') ?? '',
        ttlMinutes: Math.round(signupLinkTtlSeconds(deps) / 60),
      }),
    refused: (error, view) => {
      const { notice, field } = refusalOf(error);
      return renderSignupPage(shell, {
        ...form,
        csrfToken: view.csrfToken,
        notice,
        field,
        email: text(view.body.email),
        name: text(view.body.name),
      });
    },
  });

  registerFlowPage(pages, {
    path: pagePathsOf(kit.shell).signupConfirm,
    closed,
    show: async (view) => {
      const { token } = view;
      // Only read: a mail scanner that opens the link uses nothing.
      const pending =
        token === undefined
          ? null
          : await view.read(() => findPendingSignup(deps.db, { token }, deps.now()));
      return token === undefined || pending !== null
        ? renderSignupConfirmPage(shell, {
            ...form,
            csrfToken: view.csrfToken,
            token,
            email: pending?.email,
          })
        : renderSignupConfirmPage(shell, {
            ...form,
            csrfToken: view.csrfToken,
            notice: confirmRefusalOf(new HttpError('invalid_token')).notice,
          });
    },
    precheck: repeatedPassword('password'),
    action: confirmEmailRequest,
    // A verification's or an address change's code typed here did its own work.
    done: (done) => renderConfirmedPage(shell, done),
    refused: (error, view) => {
      const { notice, passwordInvalid } = confirmRefusalOf(error);
      return renderSignupConfirmPage(shell, {
        ...form,
        csrfToken: view.csrfToken,
        name: text(view.body.name),
        // A refused password keeps the link (it is not spent); a spent or wrong one leaves the
        // code form.
        token: error.code === 'invalid_token' ? undefined : text(view.body.token) || undefined,
        email: text(view.body.email) ?? text(view.body.username),
        notice,
        passwordInvalid,
      });
    },
  });
}
