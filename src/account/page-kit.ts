import type { FastifyReply, FastifyRequest } from 'fastify';
import { isSecure, originOf } from '../auth/request/request-site.js';
import { pageDefaults, type PageSettings } from '../config/page-settings.js';
import { HttpError } from '../http/errors.js';
import { paletteFor } from '../pages/colour.js';
import { markup, type SafeHtml } from '../pages/html.js';
import { createShell, type PageShell } from '../pages/layout.js';
import { formatWait, type Notice } from '../pages/notices.js';
import { pagePolicy } from '../pages/page-csp.js';
import { pageStyle } from '../pages/page-style.js';
import { passwordMismatchText, repeatDiffers } from '../pages/new-password-fields.js';
import { createCsrfGuard, createFormCsrf } from './csrf-guard.js';
import { sendPage } from '../pages/send-page.js';

/*
 * What the account pages outside `/account` share (reset, lock, verify, invitation, sign-up):
 * the sign-in page's look and CSP; `Referrer-Policy: no-referrer` on a page whose URL carries a
 * secret; the CSRF check, which takes the browser's `Origin: null` (what a no-referrer page
 * posts) only together with `Sec-Fetch-Site: same-origin`; and the Auth.js double-submit CSRF
 * pair, made here when the browser holds none.
 */

export interface PageKitSettings {
  authSecrets: readonly string[];
  authUrl: string | undefined;
  page?: PageSettings | undefined;
}

export interface SendOptions {
  /** A Set-Cookie line (the CSRF pair's, when a fresh one was made). */
  cookie?: string | undefined;
  headers?: Record<string, string>;
  /** `no-referrer` (the default) for a page whose URL or form carries a secret. */
  referrer?: 'no-referrer' | 'same-origin';
}

export function createPageKit(settings: PageKitSettings) {
  const page = settings.page ?? pageDefaults;
  const style = pageStyle(paletteFor(page.accentColor));
  const shell: PageShell = createShell(page, style, '/api/auth');
  const policy = pagePolicy(style, page.logoUrl, page.formTargets);
  const secureOf = (request: FastifyRequest) => isSecure(request, settings.authUrl);
  const assertCsrf = createCsrfGuard({
    secrets: settings.authSecrets,
    originOf: (request) =>
      request.headers.origin === 'null' && request.headers['sec-fetch-site'] === 'same-origin'
        ? 'null'
        : originOf(request, settings.authUrl),
    secureOf,
  });

  /** The browser's CSRF token, and the cookie to set when it held no valid one. */
  const csrfFor = createFormCsrf(settings.authSecrets, secureOf);

  /** An HTML answer with the pages' CSP and referrer policy. */
  const send = (reply: FastifyReply, status: number, html: string, options: SendOptions = {}) => {
    return sendPage(reply, html, {
      status,
      policy,
      referrer: options.referrer ?? 'no-referrer',
      cookies: options.cookie === undefined ? undefined : [options.cookie],
      headers: options.headers,
    });
  };

  /** The Retry-After of a refusal, for the page's answer too. */
  const answerHeaders = (error: HttpError): Record<string, string> => {
    const retryAfter = error.headers['retry-after'];
    return retryAfter === undefined ? {} : { 'retry-after': retryAfter };
  };

  /** The `token` query parameter of a link, or undefined. */
  const tokenOf = (request: FastifyRequest): string | undefined =>
    new URLSearchParams(request.url.split('?')[1] ?? '').get('token') || undefined;

  return { shell, secureOf, assertCsrf, csrfFor, send, answerHeaders, tokenOf };
}

/**
 * A mailed-link page's words for a refusal: throttled, a spent or wrong secret, or the action's
 * own (a weak password's reason), marking the fields when one of them is at fault.
 */
export const mailedLinkNotice = (error: HttpError): Notice => ({
  tone: 'error',
  text:
    error.code === 'rate_limited'
      ? `Too many attempts. Try again in ${formatWait(Number(error.headers['retry-after'] ?? 60))}.`
      : error.code === 'invalid_token'
        ? 'This link or code is not valid: it may have expired or been used already. Ask for a new mail.'
        : error.code === 'second_factor_required'
          ? 'Your account has two-step sign-in: enter the code from your authenticator app too (or one of your recovery codes). Your link still works.'
          : error.code === 'second_factor_invalid'
            ? 'The code from your authenticator app is not right, or was used already. Enter the code it shows now; your link still works.'
            : error.message,
  fieldsInvalid: error.code === 'weak_password' || error.code === 'invalid_field',
});

/** Why a page's form is refused when its repeated new password differs (the page's own check). */
export const passwordMismatchReason = 'password_mismatch';

/** A flow page's precheck: the new password `name` and its `<name>Repeat` must match. */
export const repeatedPassword =
  (name: string) =>
  (body: Record<string, unknown>): HttpError | undefined =>
    repeatDiffers(body, name)
      ? new HttpError('invalid_field', {}, passwordMismatchText, {
          field: `${name}Repeat`,
          reason: passwordMismatchReason,
        })
      : undefined;

/** Which of a new password's two fields a refusal is about, for renderNewPasswordFields. */
export const newPasswordInvalid = (error: HttpError | undefined): ('password' | 'repeat')[] =>
  error === undefined
    ? []
    : error.reason === passwordMismatchReason
      ? ['password', 'repeat']
      : error.code === 'weak_password' ||
          (error.code === 'invalid_field' && error.field === 'password')
        ? ['password']
        : [];

/** A kept field's ` value="…"` attribute, or nothing. */
export const keptValue = (value: string | undefined) =>
  value !== undefined && markup` value="${value}"`;

/** The start of a mailed code's form (another device than the link's): up to its address. */
export const codeFormStart = (action: string, csrfToken: string) =>
  markup`<form method="post" action="${action}">
<input type="hidden" name="csrfToken" value="${csrfToken}">
<label for="email">Email</label>`;

/** The mailed code's form folded under the link's button, for another device. */
export const codeInstead = (form: SafeHtml) => markup`<details>
<summary>Have a code instead?</summary>
${form}
</details>`;

/** A form field's value when it is text. */
export const textOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

export type PageKit = ReturnType<typeof createPageKit>;
