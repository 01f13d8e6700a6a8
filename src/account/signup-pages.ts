import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageDefaults, type PageSettings } from '../config/page-settings.js';
import { HttpError } from '../http/errors.js';
import { paletteFor } from '../pages/colour.js';
import type { PageShell } from '../pages/layout.js';
import { formatWait, type Notice } from '../pages/notices.js';
import { pagePolicy } from '../pages/page-csp.js';
import { pageStyle } from '../pages/page-style.js';
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
import { createFormCsrf } from './form-csrf.js';
import { readBody } from './request-body.js';

export interface SignupPageSettings {
  authSecrets: readonly string[];
  page?: PageSettings | undefined;
  mailTokenTtlSeconds: number;
  passwordMinLength: number;
}

export interface SignupPageDeps {
  /** The account routes' CSRF check (a foreign Origin or a missing token: 403 `csrf`). */
  assertCsrf(request: FastifyRequest, body: Record<string, unknown>): void;
  secureOf(request: FastifyRequest): boolean;
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
  deps: SignupPageDeps,
  settings: SignupPageSettings,
): void {
  const page = settings.page ?? pageDefaults;
  const style = pageStyle(paletteFor(page.accentColor));
  const shell: PageShell = {
    productName: page.productName,
    logoUrl: page.logoUrl,
    style,
    basePath: '/api/auth',
  };
  const policy = pagePolicy(style, page.logoUrl);
  const csrfFor = createFormCsrf(settings.authSecrets, deps.secureOf);
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

  const send = (
    reply: FastifyReply,
    status: number,
    html: string,
    csrf: { cookie?: string },
    headers: Record<string, string> = {},
  ) => {
    reply.code(status).headers({
      ...headers,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': policy,
      'referrer-policy': 'same-origin',
    });
    if (csrf.cookie !== undefined) reply.header('set-cookie', csrf.cookie);
    return reply.send(html);
  };
  const closed = (reply: FastifyReply) => send(reply, 403, renderSignupClosedPage(shell), {});
  const form = { passwordMinLength: settings.passwordMinLength };

  scope.get(signupPagePath, async (request, reply) => {
    if (!actionDeps.signupOpen) return closed(reply);
    const csrf = csrfFor(request);
    return send(reply, 200, renderSignupPage(shell, { ...form, csrfToken: csrf.token }), csrf);
  });

  scope.post(signupPagePath, async (request, reply) => {
    const body = readBody(request);
    deps.assertCsrf(request, body);
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
      const retryAfter = error.headers['retry-after'];
      const headers: Record<string, string> =
        retryAfter === undefined ? {} : { 'retry-after': retryAfter };
      return send(reply, error.status, html, csrf, headers);
    }
    // The action checked the address; the page names it as the mail's recipient.
    const email = readEmail(text(body.email) ?? '') ?? '';
    const ttlMinutes = Math.round(settings.mailTokenTtlSeconds / 60);
    return send(reply, 200, renderSignupSentPage(shell, { email, ttlMinutes }), csrf);
  });
}
