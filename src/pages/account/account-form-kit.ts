import type { AccountForm } from './account-notices.js';
import { markup, type SafeHtml } from '../html.js';
import { noticeId, renderNotice } from '../layout.js';
import type { Notice } from '../notices.js';

/*
 * What every form of the account page is drawn with: the CSRF field, a refused form's notice
 * inside it, and the state of the fields it is about.
 */

/** A form just sent and refused: what was typed (never a password) and the fields to mark. */
export interface SentForm {
  form: AccountForm;
  values: Readonly<Record<string, string>>;
  invalid: readonly string[];
}

/** The part of the account page's view its forms are drawn from. */
export interface FormView {
  /** Auth.js's CSRF token: every form carries it. */
  csrfToken: string;
  notice: Notice | undefined;
  sent?: SentForm | undefined;
  /** Where the page lives (ACCOUNT_PAGES_PATH): its forms post below it. */
  accountPath: string;
  user: { email: string };
}

/**
 * `aria-invalid` and the notice as description on a field the refused form is about; the first
 * such field takes the focus, which also scrolls the long page to it.
 */
export function fieldState(view: FormView, form: AccountForm, field: string, describedBy = '') {
  const sent = view.sent?.form === form ? view.sent : undefined;
  const invalid = sent !== undefined && sent.invalid.includes(field);
  const ids = [describedBy, invalid ? noticeId : ''].filter((id) => id !== '').join(' ');
  return markup`${ids !== '' && markup` aria-describedby="${ids}"`}${invalid && markup` aria-invalid="true"`}${sent?.invalid[0] === field && markup` autofocus`}`;
}

/**
 * The forms whose refusal is told inside the form, beside its fields; the others' (a session's
 * sign-out, a token's revoke: a row that may be gone from the list) stays at the top of the page.
 */
export const toldInForm = (form: AccountForm) =>
  form !== 'session' && form !== 'sessions' && form !== 'access-token-revoke';

/** A refused form's notice, inside that form (the page's top only points to it). */
export function formNotice(view: FormView, form: AccountForm): SafeHtml | undefined {
  return view.sent?.form === form && view.notice?.tone === 'error' && toldInForm(form)
    ? renderNotice(view.notice)
    : undefined;
}

export const csrfField = (view: FormView) =>
  markup`<input type="hidden" name="csrfToken" value="${view.csrfToken}">`;

/**
 * The current password a (recent) form asks for when the session is not recent, beside the
 * account's address for password managers; `refused`: this form's post was just refused.
 */
export function currentPasswordField(
  view: FormView,
  form: AccountForm,
  id: string,
  refused: boolean,
): SafeHtml {
  return markup`<input type="email" autocomplete="username" value="${view.user.email}" hidden>
<label for="${id}">Current password</label>
<input id="${id}" name="currentPassword" type="password" autocomplete="current-password" required${refused ? fieldState(view, form, 'currentPassword') : markup``}>`;
}

/** A date as the page prints it, the same for every reader: `26 Nov 2026`. */
export function day(iso: string): string {
  const date = new Date(iso);
  const months = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
  return `${date.getUTCDate()} ${months[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}
