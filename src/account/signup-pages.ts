import type { FastifyInstance, FastifyReply } from 'fastify';
import { HttpError } from '../http/errors.js';
import { formatWait, type Notice } from '../pages/notices.js';
import {
  renderSignupClosedPage,
  renderSignupPage,
  renderSignupSentPage,
  signupPagePath,
  type SignupField,
} from '../pages/signup-pages.js';
import { readEmail } from '../users/email.js';
import { runAction, type AccountDeps } from './action.js';
import { signUpAction } from './actions/signup.js';
import { createPageKit, textOf as text, type PageKitSettings } from './page-kit.js';
import { readBody } from './request-body.js';

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
      if (error.message.startsWith('Field name'))
        return {
          notice: notice('Enter your name: up to 200 characters, on one line.'),
          field: 'name',
        };
      if (error.message.startsWith('Field password'))
        return { notice: notice('Enter a password.'), field: 'password' };
      return {
        notice: notice('Enter a valid email address, like ada@example.com.'),
        field: 'email',
      };
    default:
      return { notice: notice(error.message) };
  }
}

/**
 * `GET|POST /account/signup` (no script): the form, and its post running the JSON route's
 * action. Every address that gets past the checks lands on the same "check your inbox" page;
 * a refusal shows the form again with the reason in words. SIGNUP=closed: a page that says so
 * (403), with nothing to fill in.
 */
export function registerSignupPages(
  scope: FastifyInstance,
  actionDeps: AccountDeps,
  settings: SignupPageSettings,
): void {
  const { shell, assertCsrf, csrfFor, send: sendPage, answerHeaders } = createPageKit(settings);
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
      await runAction(signUpAction, actionDeps, { request, reply, body });
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
}
