import type { AccountForm } from './account-notices.js';
import {
  csrfField,
  currentPasswordField,
  day,
  fieldState,
  formNotice,
  toldInForm,
  type SentForm,
} from './account-form-kit.js';
import {
  accessTokensSection,
  type AccessTokensView,
  type NewAccessToken,
} from './account-access-tokens.js';
import { identitiesSection, type IdentitiesView } from './account-identities.js';
import { secondFactorSection, type SecondFactorView } from './account-second-factor.js';
import { historySection, sessionsSection, type SecurityView } from './account-security.js';
import { markup, trustedHtml, type SafeHtml } from '../html.js';
import { passkeyScript } from '../passkey-script.js';
import {
  noticeId,
  renderDocument,
  renderNotice,
  renderSignOutForm,
  type PageShell,
} from '../layout.js';
import type { Notice } from '../notices.js';
import { renderNewPasswordFields } from '../new-password-fields.js';

/** The account as the page shows it (`GET /api/account`'s user). */
export interface AccountUser {
  name: string;
  email: string;
  emailVerified: boolean;
}

/** A passkey as the page lists it (`GET /api/account/passkeys`'s entries). */
export interface PasskeyRow {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export type { SecondFactorView, SentForm };

/**
 * What a form's answer shows on the page this once, as the answer to its own post (never a
 * redirect's target, so in no URL, history entry or cookie): a set-up's key, new recovery
 * codes, an access token just made.
 */
export interface ShownOnce {
  secondFactor?: Partial<SecondFactorView>;
  accessToken?: NewAccessToken;
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
  /** A confirmation link was mailed to this address (false: an operator made it unverified). */
  verificationMailed?: boolean;
  /** Absent: second factors are off and this account has none (no section). */
  secondFactor?: SecondFactorView | undefined;
  /** The account's passkeys; undefined: no passkeys section. */
  passkeys?: readonly PasskeyRow[] | undefined;
  /** Identities at providers; undefined: none configured, no section. */
  identities?: IdentitiesView | undefined;
  /** The live access tokens, and one just made; undefined: no section. */
  accessTokens?: AccessTokensView | undefined;
  /**
   * The account has no password (a provider made it): the password section says how to set
   * one (the reset flow, when mail is on) instead of asking for the current one.
   */
  noPassword?: boolean;
  /** The session may use (recent) routes now: no password asked for before them. */
  recent?: boolean;
}

/** The view with where the page lives (ACCOUNT_PAGES_PATH): its forms post below it. */
type PlacedView = AccountPageView & { accountPath: string };

function profileSection(view: PlacedView): SafeHtml {
  const { user } = view;
  const typed = view.sent?.form === 'profile' ? view.sent.values.name : undefined;
  return markup`<section aria-labelledby="profile-title">
<h2 id="profile-title">Profile</h2>
<form method="post" action="${view.accountPath}/profile">
${csrfField(view)}
${formNotice(view, 'profile')}
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
function emailSection(view: PlacedView): SafeHtml {
  const { user } = view;
  const verified = user.emailVerified ? 'verified' : 'not verified yet';
  const typed = view.sent?.form === 'email' ? view.sent.values.email : undefined;
  const state = (field: string, describedBy?: string) =>
    fieldState(view, 'email', field, describedBy);
  const resend =
    !user.emailVerified &&
    view.mailEnabled === true &&
    markup`<p>${
      view.verificationMailed === true
        ? markup`We mailed this address a link to confirm it is yours. Nothing arrived, or the link expired?`
        : markup`This address is not confirmed yet. We can mail it a link to confirm it is yours.`
    }</p>
<form method="post" action="${view.accountPath}/email/verification">
${csrfField(view)}
${formNotice(view, 'verification')}
<button type="submit" class="secondary">${view.verificationMailed === true ? 'Send the confirmation mail again' : 'Mail me a confirmation link'}</button>
</form>`;
  // Folded away until wanted (no script: `<details>`), open again when its post was refused.
  const change = markup`<details${view.sent?.form === 'email' && markup` open`}>
<summary>Change your address</summary>
<form method="post" action="${view.accountPath}/email/change">
${csrfField(view)}
${formNotice(view, 'email')}
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

/** The new password's fields at fault, in the shared fields' terms. */
const newPasswordFaults = (invalid: readonly string[]) =>
  [
    invalid.includes('newPassword') ? ('password' as const) : undefined,
    invalid.includes('newPasswordRepeat') ? ('repeat' as const) : undefined,
  ].filter((one) => one !== undefined);

function noPasswordSection(forgotUrl: string | undefined): SafeHtml {
  const how =
    forgotUrl === undefined
      ? markup`Ask your administrator to set one for you.`
      : markup`To add one, <a href="${forgotUrl}">ask for a link to set it</a>: we mail it to your address.`;
  return markup`<section aria-labelledby="password-title">
<h2 id="password-title">Password</h2>
<p>This account has no password: it signs in with the services below. ${how}</p>
</section>`;
}

function passwordSection(view: PlacedView): SafeHtml {
  if (view.noPassword === true)
    return noPasswordSection(
      view.mailEnabled === true ? `${view.accountPath}/password/forgot` : undefined,
    );
  const state = (field: string) => fieldState(view, 'password', field);
  const sent = view.sent?.form === 'password' ? view.sent : undefined;
  // The username beside the passwords (in the new password's fields) lets a password manager
  // file the new one under it.
  return markup`<section aria-labelledby="password-title">
<h2 id="password-title">Password</h2>
<form method="post" action="${view.accountPath}/password/change">
${csrfField(view)}
${formNotice(view, 'password')}
<label for="currentPassword">Current password</label>
<input id="currentPassword" name="currentPassword" type="password" autocomplete="current-password" required${state('currentPassword')}>
${renderNewPasswordFields({
  minLength: view.passwordMinLength,
  username: view.user.email,
  name: 'newPassword',
  label: 'New password',
  invalid: sent === undefined ? [] : newPasswordFaults(sent.invalid),
  messageId: noticeId,
  mayFocus: sent?.invalid[0] !== 'currentPassword',
})}
<button type="submit">Change password</button>
</form>
<p class="hint after">Your other sessions will be signed out; you stay signed in here.</p>
</section>`;
}

/**
 * Passkeys: each with its dates, and (folded away) its rename and remove forms, which work
 * without script; removing asks for the current password unless the session is recent. Adding
 * needs WebAuthn, so script: the add form is hidden until the page's script finds passkeys
 * supported, and a hint says so otherwise.
 */
function passkeysSection(view: PlacedView, passkeys: readonly PasskeyRow[]): SafeHtml {
  const sent = view.sent;
  const askPassword = view.recent !== true;
  const rows = passkeys.map((passkey) => {
    const refused = (form: AccountForm) => sent?.form === form && sent.values.id === passkey.id;
    const renaming = refused('passkey-rename');
    const removing = refused('passkey-remove');
    const typed = renaming ? sent?.values.name : undefined;
    const rename = `rename-${passkey.id}`;
    const remove = `remove-password-${passkey.id}`;
    const used =
      passkey.lastUsedAt === null ? 'never used' : `last used ${day(passkey.lastUsedAt)}`;
    return markup`<li>
<p class="fact"><span class="label">${passkey.name}</span> <span class="hint">Added ${day(passkey.createdAt)}, ${used}</span></p>
<details${(renaming || removing) && markup` open`}>
<summary>Rename or remove<span hidden> ${passkey.name}</span></summary>
<form method="post" action="${view.accountPath}/passkeys/rename">
${csrfField(view)}
${renaming && formNotice(view, 'passkey-rename')}
<input type="hidden" name="id" value="${passkey.id}">
<label for="${rename}">New name</label>
<input id="${rename}" name="name" type="text" maxlength="200" required value="${typed ?? passkey.name}"${renaming ? fieldState(view, 'passkey-rename', 'name') : markup``}>
<button type="submit" class="secondary">Rename</button>
</form>
<form method="post" action="${view.accountPath}/passkeys/remove">
${csrfField(view)}
${removing && formNotice(view, 'passkey-remove')}
<input type="hidden" name="id" value="${passkey.id}">
${askPassword && currentPasswordField(view, 'passkey-remove', remove, removing)}
<button type="submit" class="secondary">Remove this passkey</button>
</form>
</details>
</li>`;
  });
  const list =
    passkeys.length === 0
      ? markup`<p class="hint">No passkeys yet. A passkey lets you sign in with your device's screen lock, fingerprint or face instead of your password.</p>`
      : markup`<ul class="passkeys">
${rows.map(
  (row) => markup`${row}
`,
)}</ul>`;
  const addPassword = 'add-passkey-password';
  return markup`<section aria-labelledby="passkeys-title">
<h2 id="passkeys-title">Passkeys</h2>
${list}
<form data-passkey-add data-passkey-only hidden>
${csrfField(view)}
<label for="passkeyName">Name for the new passkey <span class="hint">(optional)</span></label>
<input id="passkeyName" name="passkeyName" type="text" maxlength="200" placeholder="My laptop">
${askPassword && currentPasswordField(view, 'passkey-remove', addPassword, false)}
<button type="submit">Add a passkey</button>
<p id="passkey-add-status" class="status notice notice-error" role="status"></p>
</form>
<p class="hint after" data-passkey-none>Adding a passkey needs a browser with passkey support and JavaScript switched on.</p>
</section>`;
}

/**
 * The top of the page: news, or a refusal not tied to a form; a refused form's notice is in the
 * form itself (on a phone the top is a long way from it), and the top only points to it.
 */
function topNotice(view: PlacedView): SafeHtml | undefined {
  const sent = view.sent;
  if (sent === undefined || view.notice?.tone !== 'error' || !toldInForm(sent.form))
    return renderNotice(view.notice);
  return markup`<p class="notice notice-error">Nothing was changed: <a href="#${noticeId}">see why, beside the form</a>.</p>`;
}

/**
 * `/account`: the signed-in account, one `<section>` per part (profile, e-mail, password,
 * access tokens, where one is signed in, the security history; second factors, passkeys and
 * identities slot in as sections too), each with a plain form posting
 * to `<the page>/…`, then the sign-out button. No script: the forms work as they are, and a
 * refused one comes back with its notice inside it, its fields marked and the first of them
 * focused, and a pointer to it at the top.
 */
export function renderAccountPage(shell: PageShell, shown: AccountPageView): string {
  const view: PlacedView = { ...shown, accountPath: shell.accountPath };
  const sections = [profileSection(view), emailSection(view), passwordSection(view)];
  if (view.secondFactor !== undefined) sections.push(secondFactorSection(view, view.secondFactor));
  if (view.passkeys !== undefined) sections.push(passkeysSection(view, view.passkeys));
  if (view.identities !== undefined)
    sections.push(identitiesSection({ ...view, authPath: shell.basePath }, view.identities));
  if (view.accessTokens !== undefined)
    sections.push(
      accessTokensSection({ ...view, tokenRoute: `${shell.basePath}/token` }, view.accessTokens),
    );
  sections.push(sessionsSection(view, view.accountPath), historySection(view));
  const content = markup`${topNotice(view)}
${sections.map((section) => markup`${section}\n`)}<section aria-label="Sign out">
${renderSignOutForm(shell, { csrfToken: view.csrfToken, callbackUrl: view.signOutUrl, secondary: true })}
</section>${view.passkeys !== undefined && markup`\n<script>${trustedHtml(passkeyScript)}</script>`}`;
  return renderDocument(shell, 'Your account', content, view.notice);
}
