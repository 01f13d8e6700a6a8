import type { AccountForm } from './account-notices.js';
import { historySection, sessionsSection, type SecurityView } from './account-security.js';
import { markup, type SafeHtml } from './html.js';
import {
  noticeId,
  renderDocument,
  renderNotice,
  renderSignOutForm,
  type PageShell,
} from './layout.js';
import type { Notice } from './notices.js';

/** The account as the page shows it (`GET /api/account`'s user). */
export interface AccountUser {
  name: string;
  email: string;
  emailVerified: boolean;
}

/** A form just sent and refused: what was typed (never a password) and the fields to mark. */
export interface SentForm {
  form: AccountForm;
  values: Readonly<Record<string, string>>;
  invalid: readonly string[];
}

export interface AccountPageView extends SecurityView {
  user: AccountUser;
  /** Auth.js's CSRF token: every form here carries it, the sign-out form too. */
  csrfToken: string;
  /** Where sign-out ends. */
  signOutUrl: string;
  /** PASSWORD_MIN_LENGTH, shown beside the new password. */
  passwordMinLength: number;
  notice: Notice | undefined;
  sent?: SentForm | undefined;
  /** The mail flows are on: the page offers the address's change and the mail sent again. */
  mailEnabled?: boolean;
}

const rulesId = 'password-rules';

/** `aria-invalid` and the notice as description on a field the refused form is about. */
function fieldState(view: AccountPageView, form: AccountForm, field: string, describedBy = '') {
  const invalid = view.sent?.form === form && view.sent.invalid.includes(field);
  const ids = [describedBy, invalid ? noticeId : ''].filter((id) => id !== '').join(' ');
  return markup`${ids !== '' && markup` aria-describedby="${ids}"`}${invalid && markup` aria-invalid="true"`}`;
}

const csrfField = (view: AccountPageView) =>
  markup`<input type="hidden" name="csrfToken" value="${view.csrfToken}">`;

function profileSection(view: AccountPageView): SafeHtml {
  const { user } = view;
  const typed = view.sent?.form === 'profile' ? view.sent.values.name : undefined;
  return markup`<section aria-labelledby="profile-title">
<h2 id="profile-title">Profile</h2>
<form method="post" action="/account/profile">
${csrfField(view)}
<label for="name">Name</label>
<input id="name" name="name" type="text" autocomplete="name" maxlength="200" required value="${typed ?? user.name}"${fieldState(view, 'profile', 'name')}>
<button type="submit">Save name</button>
</form>
</section>`;
}

/**
 * The address, whether it is verified, "send the confirmation mail again" while it is not, and
 * the change-address form. A change needs a recent proof of the password, so the form asks for
 * it as the password form does. Without mail (production without SMTP_URL) only the address.
 */
function emailSection(view: AccountPageView): SafeHtml {
  const { user } = view;
  const verified = user.emailVerified ? 'verified' : 'not verified yet';
  const typed = view.sent?.form === 'email' ? view.sent.values.email : undefined;
  const state = (field: string, describedBy?: string) =>
    fieldState(view, 'email', field, describedBy);
  const resend =
    !user.emailVerified &&
    view.mailEnabled === true &&
    markup`<p>We mailed this address a link to confirm it is yours. Nothing arrived, or the link expired?</p>
<form method="post" action="/account/email/verification">
${csrfField(view)}
<button type="submit" class="secondary">Send the confirmation mail again</button>
</form>`;
  // Folded away until wanted (no script: `<details>`), open again when its post was refused.
  const change = markup`<details${view.sent?.form === 'email' && markup` open`}>
<summary>Change your address</summary>
<form method="post" action="/account/email/change">
${csrfField(view)}
<input type="email" autocomplete="username" value="${user.email}" hidden>
<label for="newEmail">New address</label>
<input id="newEmail" name="email" type="email" autocomplete="email" autocapitalize="none" spellcheck="false" maxlength="254" required value="${typed ?? ''}"${state('email')}>
<label for="emailPassword">Current password</label>
<input id="emailPassword" name="currentPassword" type="password" autocomplete="current-password" required${state('currentPassword')}>
<button type="submit">Change address</button>
</form>
<p class="hint after">We mail a link to the new address; your address changes when you open it. Your other sessions are then signed out, and the old address gets a notice.</p>
</details>`;
  return markup`<section aria-labelledby="email-title">
<h2 id="email-title">Email</h2>
<p class="fact"><span class="label">Address</span> ${user.email} <span class="hint">(${verified})</span></p>
${resend}
${view.mailEnabled === true && change}
</section>`;
}

function passwordSection(view: AccountPageView): SafeHtml {
  const state = (field: string, describedBy?: string) =>
    fieldState(view, 'password', field, describedBy);
  // The username beside the passwords lets a password manager file the new one under it.
  return markup`<section aria-labelledby="password-title">
<h2 id="password-title">Password</h2>
<form method="post" action="/account/password/change">
${csrfField(view)}
<input type="email" autocomplete="username" value="${view.user.email}" hidden>
<label for="currentPassword">Current password</label>
<input id="currentPassword" name="currentPassword" type="password" autocomplete="current-password" required${state('currentPassword')}>
<label for="newPassword">New password</label>
<p id="${rulesId}" class="hint field-hint">At least ${view.passwordMinLength} characters, and not a commonly used password.</p>
<input id="newPassword" name="newPassword" type="password" autocomplete="new-password" minlength="${view.passwordMinLength}" required${state('newPassword', rulesId)}>
<label for="newPasswordRepeat">Repeat the new password</label>
<input id="newPasswordRepeat" name="newPasswordRepeat" type="password" autocomplete="new-password" required${state('newPasswordRepeat')}>
<button type="submit">Change password</button>
</form>
<p class="hint after">Your other sessions will be signed out; you stay signed in here.</p>
</section>`;
}

/**
 * `/account`: the signed-in account, one `<section>` per part (profile, e-mail, password,
 * where one is signed in, the security history; second factors slot in as sections too), each with a plain form posting
 * to `/account/…`, then the sign-out button. No script: the forms work as they are, and a
 * refused one comes back with its notice at the top and its fields marked.
 */
export function renderAccountPage(shell: PageShell, view: AccountPageView): string {
  const sections = [
    profileSection(view),
    emailSection(view),
    passwordSection(view),
    sessionsSection(view),
    historySection(view),
  ];
  const content = markup`${renderNotice(view.notice)}
${sections.map((section) => markup`${section}\n`)}<section aria-label="Sign out">
${renderSignOutForm(shell, { csrfToken: view.csrfToken, callbackUrl: view.signOutUrl, secondary: true })}
</section>`;
  return renderDocument(shell, 'Your account', content, view.notice);
}
