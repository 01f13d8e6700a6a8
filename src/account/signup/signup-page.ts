import type { FastifyInstance, FastifyReply } from 'fastify';
import { HttpError } from '../../http/errors.js';
import { formatWait, type Notice } from '../../pages/notices.js';
import {
  renderSignupClosedPage,
  renderSignupConfirmPage,
  renderSignupPage,
  renderSignupSentPage,
  signupConfirmPagePath,
  signupPagePath,
  type SignupField,
} from './signup-views.js';
import { renderSignupConfirmedPage, renderVerifyDonePage } from '../email/verify-views.js';
import { readEmail } from '../../users/email.js';
import type { FlowPorts } from '../adapter.js';
import { signUpAction } from './signup.js';
import { confirmEmailRequest, type Confirmed } from '../email/verify.js';
import { findPendingSignup } from '../email/signup-confirmation.js';
import { createPageKit, textOf as text, type PageKitSettings } from '../page-kit.js';
import { readBody } from '../request-body.js';

export interface SignupPageSettings extends PageKitSettings {
  mailTokenTtlSeconds: number;
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

/** A refusal at the confirm page in words, and whether it is about the password. */
function confirmRefusalOf(error: HttpError): { notice: Notice; passwordInvalid: boolean } {
  const notice = (text: string): Notice => ({ tone: 'error', text });
  switch (error.code) {
    case 'invalid_credentials':
      return {
        notice: notice(
          'That is not the password chosen at sign-up, so no account was made. Only the person who signed up can confirm: if that was not you, ignore the mail.',
        ),
        passwordInvalid: true,
      };
    case 'invalid_field':
      return {
        notice: notice('Enter the password you chose when you signed up.'),
        passwordInvalid: true,
      };
    case 'rate_limited':
      return {
        notice: notice(
          `Too many attempts. Try again in ${formatWait(Number(error.headers['retry-after'] ?? 60))}.`,
        ),
        passwordInvalid: false,
      };
    case 'invalid_token':
      return {
        notice: notice(
          'This link or code is not valid: it may have expired, been used already, or the address has an account by now. Sign up again, or sign in.',
        ),
        passwordInvalid: false,
      };
    default:
      return { notice: notice(error.message), passwordInvalid: false };
  }
}

/**
 * `GET|POST /account/signup` (no script): the form, and its post running the JSON route's
 * action. Every address that gets past the checks lands on the same "check your inbox" page;
 * a refusal shows the form again with the reason in words. SIGNUP=closed: a page that says so
 * (403), with nothing to fill in. `GET|POST /account/signup/confirm`: the mail's link page,
 * asking for the password chosen at sign-up; its post runs `POST /api/account/email/verify`'s
 * action, and on success offers sign-in (no session is made). Its URL carries a secret, so it
 * sends `Referrer-Policy: no-referrer`.
 */
export function registerSignupPages(
  scope: FastifyInstance,
  flow: FlowPorts,
  settings: SignupPageSettings,
): void {
  const { deps: actionDeps, perform } = flow;
  const {
    shell,
    assertCsrf,
    csrfFor,
    send: sendPage,
    answerHeaders,
    tokenOf,
  } = createPageKit(settings);
  // Not a page with a secret in it: the referrer may name the page to this site.
  const send = (
    reply: FastifyReply,
    status: number,
    html: string,
    options: { cookie?: string | undefined; headers?: Record<string, string> } = {},
  ) => sendPage(reply, status, html, { ...options, referrer: 'same-origin' });
  const closed = (reply: FastifyReply) => send(reply, 403, renderSignupClosedPage(shell));
  const form = { passwordMinLength: settings.passwordMinLength };

  scope.get(signupPagePath, async (request, reply) => {
    if (!actionDeps.signupOpen) return closed(reply);
    const csrf = csrfFor(request);
    return send(reply, 200, renderSignupPage(shell, { ...form, csrfToken: csrf.token }), {
      cookie: csrf.cookie,
    });
  });

  scope.post(signupPagePath, async (request, reply) => {
    const body = readBody(request);
    assertCsrf(request, body);
    if (!actionDeps.signupOpen) return closed(reply);
    const csrf = csrfFor(request);
    try {
      await perform(signUpAction, request, reply, body);
    } catch (error) {
      if (!(error instanceof HttpError) || error.status >= 500) throw error;
      const { notice, field } = refusalOf(error);
      const html = renderSignupPage(shell, {
        ...form,
        csrfToken: csrf.token,
        notice,
        field,
        email: text(body.email),
        name: text(body.name),
      });
      return send(reply, error.status, html, {
        cookie: csrf.cookie,
        headers: answerHeaders(error),
      });
    }
    // The action checked the address; the page names it as the mail's recipient.
    const email = readEmail(text(body.email) ?? '') ?? '';
    const ttlMinutes = Math.round(settings.mailTokenTtlSeconds / 60);
    return send(reply, 200, renderSignupSentPage(shell, { email, ttlMinutes }), {
      cookie: csrf.cookie,
    });
  });

  scope.get(signupConfirmPagePath, async (request, reply) => {
    if (!actionDeps.signupOpen) return closed(reply);
    const csrf = csrfFor(request);
    const token = tokenOf(request);
    // Only read: a mail scanner that opens the link uses nothing.
    const pending =
      token === undefined
        ? null
        : await findPendingSignup(actionDeps.db, { token }, actionDeps.now());
    const html =
      token === undefined || pending !== null
        ? renderSignupConfirmPage(shell, { csrfToken: csrf.token, token, email: pending?.email })
        : renderSignupConfirmPage(shell, {
            csrfToken: csrf.token,
            notice: confirmRefusalOf(new HttpError('invalid_token')).notice,
          });
    return sendPage(reply, 200, html, { cookie: csrf.cookie });
  });

  scope.post(signupConfirmPagePath, async (request, reply) => {
    const body = readBody(request);
    assertCsrf(request, body);
    if (!actionDeps.signupOpen) return closed(reply);
    const csrf = csrfFor(request);
    let done: Confirmed;
    try {
      done = (await perform(confirmEmailRequest, request, reply, body)).body;
    } catch (error) {
      if (!(error instanceof HttpError) || error.status >= 500) throw error;
      const { notice, passwordInvalid } = confirmRefusalOf(error);
      // A wrong password keeps the link (it is not spent); a spent or wrong one leaves the code form.
      const token = error.code === 'invalid_token' ? undefined : text(body.token) || undefined;
      const html = renderSignupConfirmPage(shell, {
        csrfToken: csrf.token,
        token,
        email: text(body.email) ?? text(body.username),
        notice,
        passwordInvalid,
      });
      return sendPage(reply, error.status, html, {
        cookie: csrf.cookie,
        headers: answerHeaders(error),
      });
    }
    if (done.outcome !== 'created') {
      // A verification's or an address change's code typed here: it did its own work.
      const html = renderVerifyDonePage(shell, { outcome: done.outcome, email: done.email });
      return sendPage(reply, 200, html, { cookie: csrf.cookie });
    }
    return sendPage(reply, 200, renderSignupConfirmedPage(shell, { email: done.email }), {
      cookie: csrf.cookie,
    });
  });
}
