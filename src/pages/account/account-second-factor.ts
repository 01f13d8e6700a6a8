import type { AccountForm } from './account-notices.js';
import { csrfField, fieldState, formNotice, type FormView } from './account-form-kit.js';
import { markup, type SafeHtml } from '../html.js';
import { appKeyPart, recoveryCodesPart } from '../totp-parts.js';

/*
 * The account page's two-step sign-in section: off (set it up, with the password), a set-up
 * waiting for its code (the QR code and the secret as text for another device), or on
 * (recovery codes left, new ones, a move to a new app, off).
 */

/** Two-step sign-in as the page shows it. */
export interface SecondFactorView {
  /** New set-ups are allowed (SECOND_FACTOR is not off). */
  offered: boolean;
  /**
   * SECOND_FACTOR=required and the account has none yet (its session is older than the
   * setting): say that its next sign-in will ask it to set one up.
   */
  needed?: boolean;
  totp: boolean;
  /** Unused recovery codes. */
  recoveryCodes: number;
  /**
   * The recovery codes were made at an enrolment during sign-in and none made here since: their
   * one showing may not have reached the person (a double submit, an app that ignores them).
   */
  codesFromSignIn?: boolean;
  /** A set-up just started: the secret (shown once) and its QR code, waiting for a code. */
  enrolment?: { secret: string; qrSvg: string };
  /** Recovery codes just made, shown this once. */
  freshCodes?: readonly string[];
}

/**
 * What a factor change asks for: the password, and the app's code when TOTP is on (`code`), or
 * either the app's code or a recovery code in the one field (`codeOrRecovery`: a new app, for
 * someone who may have lost the old one).
 */
function proofFields(
  view: FormView,
  form: AccountForm,
  prefix: string,
  ask: 'password' | 'code' | 'codeOrRecovery',
) {
  const state = (field: string) => fieldState(view, form, field);
  return markup`<input type="email" autocomplete="username" value="${view.user.email}" hidden>
<label for="${prefix}Password">Your password</label>
<input id="${prefix}Password" name="currentPassword" type="password" autocomplete="current-password" required${state('currentPassword')}>
${
  ask === 'code' &&
  markup`<label for="${prefix}Code">Code from your authenticator app</label>
<input id="${prefix}Code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="7" required${state('code')}>`
}${
    ask === 'codeOrRecovery' &&
    markup`<label for="${prefix}Code">Code from your current authenticator app, or one of your recovery codes</label>
<input id="${prefix}Code" name="code" type="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="19" required${state('code')}>`
  }`;
}

const continueButton = markup`<button type="submit">Continue</button>`;

/** A form that asks for `ask` and posts to `route`, with its refusal inside it. */
function proofForm(
  view: FormView,
  form: AccountForm,
  route: string,
  fields: { prefix: string; ask: Parameters<typeof proofFields>[3] },
  button: SafeHtml,
) {
  return markup`<form method="post" action="${view.accountPath}${route}">
${csrfField(view)}
${formNotice(view, form)}
${proofFields(view, form, fields.prefix, fields.ask)}
${button}
</form>`;
}

/** A set-up waiting for its code: the key to scan, and the confirm form. */
function enrolmentPart(
  view: FormView,
  factor: SecondFactorView,
  key: { secret: string; qrSvg: string },
) {
  return markup`<p>Scan this with your ${factor.totp ? 'new ' : ''}authenticator app (or type the key into it), then enter the 6-digit code it shows.${factor.totp ? ' Your current app keeps working until then.' : ''}</p>
${appKeyPart(key)}
<form method="post" action="${view.accountPath}/totp/confirm">
${csrfField(view)}
${formNotice(view, 'totp_confirm')}
<label for="confirmCode">Code from your ${factor.totp ? 'new ' : ''}authenticator app</label>
<input id="confirmCode" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="7" required${view.sent?.invalid[0] !== 'code' && markup` autofocus`}${fieldState(view, 'totp_confirm', 'code')}>
<button type="submit">${factor.totp ? 'Use the new app from now on' : 'Turn on two-step sign-in'}</button>
</form>`;
}

/** TOTP on: the recovery codes left, new ones, a move to a new app, and off. */
function onPart(view: FormView, factor: SecondFactorView) {
  const sentForm = view.sent?.form;
  const codesAsked = factor.codesFromSignIn === true && factor.freshCodes === undefined;
  return markup`${factor.freshCodes !== undefined && recoveryCodesPart(factor.freshCodes)}
<p class="fact"><span class="label">Authenticator app</span> On <span class="hint">(${factor.recoveryCodes} recovery ${factor.recoveryCodes === 1 ? 'code' : 'codes'} left)</span></p>
${
  codesAsked &&
  markup`<p class="notice notice-info">Your recovery codes were shown only once, as you set up two-step sign-in while signing in. If you did not save them then, make new ones here.</p>`
}
${
  factor.offered &&
  markup`<details${(sentForm === 'recovery_codes' || codesAsked) && markup` open`}>
<summary>New recovery codes</summary>
${proofForm(view, 'recovery_codes', '/recovery-codes', { prefix: 'codes', ask: 'code' }, markup`<button type="submit">Make new recovery codes</button>`)}
<p class="hint after">The old codes stop working.</p>
</details>
<details${sentForm === 'totp_setup' && markup` open`}>
<summary>Move to a new authenticator app</summary>
<p>For a new phone, or one that was lost. Moving asks for a code from your current app, or one of your recovery codes, as turning it off does: your password alone cannot change your second step.</p>
${proofForm(view, 'totp_setup', '/totp/setup', { prefix: 'move', ask: 'codeOrRecovery' }, continueButton)}
<p class="hint after">Your current app keeps working until the new one's code is confirmed.</p>
</details>
<details${sentForm === 'totp_disable' && markup` open`}>
<summary>Turn off two-step sign-in</summary>
${proofForm(view, 'totp_disable', '/totp/disable', { prefix: 'off', ask: 'code' }, markup`<button type="submit" class="secondary">Turn off</button>`)}
</details>`
}`;
}

/** TOTP off: why, and the set-up form. */
function offPart(view: FormView, factor: SecondFactorView) {
  return markup`${
    factor.needed === true
      ? markup`<p class="notice notice-info">Every account here needs two-step sign-in now. Set it up here, or your next sign-in will ask you to.</p>`
      : markup`<p>Ask for a code from an authenticator app on your phone as well as your password when you sign in.</p>`
  }
<details${(view.sent?.form === 'totp_setup' || factor.needed === true) && markup` open`}>
<summary>Set up two-step sign-in</summary>
${proofForm(view, 'totp_setup', '/totp/setup', { prefix: 'setup', ask: 'password' }, continueButton)}
</details>`;
}

/** Two-step sign-in: a set-up waiting for its code, on, or off. */
export function secondFactorSection(view: FormView, factor: SecondFactorView): SafeHtml {
  const body =
    factor.enrolment !== undefined
      ? enrolmentPart(view, factor, factor.enrolment)
      : factor.totp
        ? onPart(view, factor)
        : offPart(view, factor);
  return markup`<section aria-labelledby="factor-title">
<h2 id="factor-title">Two-step sign-in</h2>
${body}
</section>`;
}
