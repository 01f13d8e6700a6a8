import { markup, trustedHtml, type SafeHtml } from '../html.js';
import { passkeyScript } from '../passkey-script.js';
import { noticeId, renderDocument, renderNotice, renderSignOutForm, renderWho } from '../layout.js';
import type { PageShell, SignedInUser } from '../layout.js';
import {
  enrolmentNotice,
  enrolmentNotices,
  secondStepNotices,
  type EnrolmentRefusal,
  type Notice,
} from '../notices.js';
import { appKeyPart, recoveryCodesPart } from '../totp-parts.js';
import { renderCodeForm } from './email-signin-pages.js';

export interface SignInView {
  /** Auth.js's CSRF token, the pair of the double-submit cookie sent with the page. */
  csrfToken: string;
  callbackUrl: string;
  notice: Notice | undefined;
  /** The email of the attempt that just failed, typed again for the person. */
  email?: string | undefined;
  /** The "Forgot your password?" page, when mail is on; undefined: no link. */
  forgotPasswordUrl?: string | undefined;
  /** The sign-up page, when SIGNUP=open; undefined: no link. */
  signupUrl?: string | undefined;
  /**
   * The password was right and the account has two-step sign-in: ask for the code (the
   * challenge cookie stands for the password). `invalid`: a code was just refused.
   */
  /**
   * `paused`: the codes are paused by wrong ones (its notice instead of the step's own, and the
   * recovery code's form open: it is checked through the pause).
   */
  secondStep?: { invalid: boolean; paused?: Notice | undefined } | undefined;
  /**
   * SECOND_FACTOR=required and the account has no second factor: the app's key to enrol, and a
   * code of it is asked for with the code mailed to `codeSentTo` (null: mail is off, an
   * operator's enrolment code instead); the challenge cookie stands for the password.
   * `refused`: which field a post just had refused.
   */
  enrolment?:
    | {
        key: { secret: string; qrSvg: string };
        codeSentTo: string | null;
        refused?: EnrolmentRefusal | undefined;
        /** With `refused: 'paused'`: how long the lock holds. */
        retryAfterSeconds?: number | undefined;
      }
    | undefined;
  /** Someone is signed in already: greet them, with where to continue and how to sign out. */
  signedIn?: { user: SignedInUser; continueUrl: string; signOutUrl: string } | undefined;
  /** Identity providers, a button each (Auth.js's `signin/{id}` post). */
  providers?: readonly SignInProvider[] | undefined;
  /** An identity offered to an account: a mailed code proves it, beside the password. */
  identityOffer?: { askCode: boolean } | undefined;
  /**
   * EMAIL_SIGNIN=on: a second button of the form asks for a sign-in mail instead. `codeForm`: a
   * mailed code was refused, so its form comes first (the address this browser asked for).
   */
  emailSignIn?: { codeForm?: { email: string | undefined } | undefined } | undefined;
}

/** The mailed code's forms: ask for one, then (once sent) type it. */
function renderOfferCode(shell: PageShell, view: SignInView): SafeHtml | false {
  const offer = view.identityOffer;
  if (offer === undefined) return false;
  const action = `${shell.basePath}/callback/identity-offer`;
  const hidden = markup`<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">`;
  const ask = markup`<form method="post" action="${action}">
${hidden}
<input type="hidden" name="action" value="send">
<button type="submit" class="secondary">${offer.askCode ? 'Send another code' : 'Email me a code instead'}</button>
</form>`;
  if (!offer.askCode) return ask;
  return markup`<form method="post" action="${action}">
${hidden}
<input type="hidden" name="action" value="confirm">
<label for="offerCode">Code from the mail</label>
<input id="offerCode" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="16" required autofocus aria-describedby="${noticeId}">
<button type="submit">Link and sign in</button>
</form>
${ask}
<p class="or">or</p>`;
}

/** A mailed code was refused: its form again, before the password's. */
function renderMailedCode(shell: PageShell, view: SignInView): SafeHtml | false {
  const codeForm = view.emailSignIn?.codeForm;
  if (codeForm === undefined) return false;
  return markup`${renderCodeForm(shell, { ...view, email: codeForm.email, invalid: true })}
<p class="or">or</p>`;
}

/** An identity provider as the sign-in page offers it. */
export interface SignInProvider {
  /** Auth.js's provider id: the form posts to `signin/{id}`. */
  id: string;
  name: string;
}

const formId = 'signin-form';

/**
 * The other ways in beside the form, after one "or": the sign-in mail (a button of the form
 * itself, posting its email field to Auth.js's `signin/email`; no password needed, so the
 * form's checks are skipped) and a button per provider, each a form posting Auth.js's own
 * fields to `signin/{id}`.
 */
function renderAlternatives(shell: PageShell, view: SignInView): SafeHtml | false {
  const providers = view.providers ?? [];
  const email =
    view.emailSignIn !== undefined &&
    markup`<button type="submit" form="${formId}" formaction="${shell.basePath}/signin/email" formnovalidate class="secondary">Email me a sign-in link</button>`;
  if (providers.length === 0 && email === false) return false;
  const buttons = providers.map(
    (
      provider,
    ) => markup`<form method="post" action="${shell.basePath}/signin/${provider.id}" class="provider">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">
<button type="submit" class="secondary">Continue with ${provider.name}</button>
</form>`,
  );
  return markup`<p class="or">or</p>${email}
${buttons}`;
}

const whoId = 'who';

/**
 * The sign-in page: a plain form posting Auth.js's own field names (`csrfToken`, `email`,
 * `password`, `callbackUrl`) to Auth.js's credentials callback, so it works without script and
 * password managers recognise it. Focus starts in the email field, which the notice describes,
 * or in the password field when the email is kept from a failed attempt.
 *
 * A signed-in visitor is greeted first (continue, or sign out), and the form stays one click
 * away in a `<details>` to switch accounts: signing in again replaces the session held (and the
 * service ends the old one), so there is nothing to protect by hiding it, and nothing to gain by
 * showing an empty form to someone who came back by accident. `<details>` needs no script.
 */
/**
 * The second step: the code (or a recovery code) posted to the same callback with the
 * challenge cookie the right password left, so the password is not sent again. Two plain
 * forms, the recovery code's in a `<details>`; no script.
 */
function renderSecondStep(
  shell: PageShell,
  view: SignInView,
  step: NonNullable<SignInView['secondStep']>,
): string {
  const { invalid, paused } = step;
  const notice = paused ?? (invalid ? secondStepNotices.invalid : secondStepNotices.required);
  const marked = invalid && markup` aria-invalid="true"`;
  const hidden = markup`<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">`;
  const content = markup`${renderNotice(notice)}
<form method="post" action="${shell.basePath}/callback/credentials">
${hidden}
<label for="otp">Code from your authenticator app</label>
<input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required${paused === undefined && markup` autofocus`} aria-describedby="${noticeId}"${marked}>
<button type="submit">Continue</button>
</form>
<details${paused !== undefined && markup` open`}>
<summary>Use a recovery code instead</summary>
<form method="post" action="${shell.basePath}/callback/credentials">
${hidden}
<label for="recoveryCode">Recovery code</label>
<input id="recoveryCode" name="recoveryCode" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" required${paused !== undefined && markup` autofocus`}>
<button type="submit">Continue</button>
</form>
<p class="hint">Each recovery code works once. Lost your app and your codes? Ask your administrator.</p>
</details>
<p class="hint"><a href="${shell.basePath}/signin">Start again</a></p>`;
  return renderDocument(shell, `Sign in to ${shell.productName}`, content, notice);
}

/**
 * The enrolment step: the app's key (QR code, and as text for another device), the code mailed
 * to the account's address (or an operator's enrolment code) and the app's code, posted to the
 * same callback with the challenge cookie; right codes turn two-step sign-in on and sign in
 * (the recovery codes follow: renderEnrolledPage). No script.
 */
function renderEnrolment(
  shell: PageShell,
  view: SignInView,
  enrolment: NonNullable<SignInView['enrolment']>,
): string {
  const { codeSentTo, refused } = enrolment;
  const notice = enrolmentNotice(codeSentTo, refused, enrolment.retryAfterSeconds);
  const invalid = (field: 'otp' | 'email_code') =>
    (refused === field || (field === 'email_code' && refused === 'email_code_missing')) &&
    markup` aria-invalid="true"`;
  // Focus where the person types next: the field refused, else the mailed code.
  const focusOtp = refused === 'otp' && markup` autofocus`;
  const focusCode = refused !== 'otp' && markup` autofocus`;
  const codeLabel =
    codeSentTo === null
      ? markup`Enrolment code from your administrator`
      : markup`Code from the mail we sent to ${codeSentTo}`;
  const content = markup`${renderNotice(notice)}
<p>Scan this with an authenticator app on your phone (or type the key into it), then enter the 6-digit code it shows.</p>
${appKeyPart(enrolment.key)}
<form method="post" action="${shell.basePath}/callback/credentials">
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">
<label for="emailCode">${codeLabel}</label>
<input id="emailCode" name="emailCode" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="16" required${focusCode} aria-describedby="${noticeId}"${invalid('email_code')}>
<label for="otp">Code from your authenticator app</label>
<input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required${focusOtp} aria-describedby="${noticeId}"${invalid('otp')}>
<button type="submit">Turn on and sign in</button>
</form>
<p class="hint"><a href="${shell.basePath}/signin">Start again</a></p>`;
  return renderDocument(shell, 'Set up two-step sign-in', content, notice);
}

/** After an enrolment at sign-in: the recovery codes, shown this once, then on to the app. */
export function renderEnrolledPage(
  shell: PageShell,
  view: { recoveryCodes: readonly string[]; continueUrl: string },
): string {
  const notice = enrolmentNotices.done;
  const content = markup`${renderNotice(notice)}
${recoveryCodesPart(view.recoveryCodes)}
<a class="button" href="${view.continueUrl}">Continue</a>`;
  return renderDocument(shell, 'Two-step sign-in is on', content, notice);
}

export function renderSignInPage(shell: PageShell, view: SignInView): string {
  if (view.enrolment !== undefined) return renderEnrolment(shell, view, view.enrolment);
  if (view.secondStep !== undefined) return renderSecondStep(shell, view, view.secondStep);
  const { notice, email, signedIn } = view;
  const describedBy = notice !== undefined && markup` aria-describedby="${noticeId}"`;
  const invalid = notice?.fieldsInvalid === true && markup` aria-invalid="true"`;
  // Signed in, focus is not pulled into a form the person may not want.
  const focusEmail = signedIn === undefined && email === undefined && markup` autofocus`;
  const focusPassword = signedIn === undefined && email !== undefined && markup` autofocus`;
  const kept = email !== undefined && markup` value="${email}"`;
  const forgot =
    view.forgotPasswordUrl !== undefined &&
    markup`<a href="${view.forgotPasswordUrl}">Forgot your password?</a>`;
  const signup =
    view.signupUrl !== undefined &&
    markup`New here? <a href="${view.signupUrl}">Create an account</a>`;
  // One paragraph under the form, centred as the form's hint is.
  const links =
    (forgot !== false || signup !== false) &&
    markup`
<p class="hint">${forgot}${forgot !== false && signup !== false && markup`<br>`}${signup}</p>`;
  // Shown by the page's script where the browser has passkeys; hidden (and inert) elsewhere.
  const passkey = markup`<div data-passkey-only hidden>
<p class="or">or</p>
<button type="button" class="secondary" data-passkey-signin>Sign in with a passkey</button>
<p id="passkey-status" class="status notice notice-error" role="status"></p>
</div>`;
  // Named only for the sign-in mail's button, which belongs to it from outside.
  const named = view.emailSignIn !== undefined && markup` id="${formId}"`;
  const form = markup`<form method="post" action="${shell.basePath}/callback/credentials" data-signin${named}>
<input type="hidden" name="csrfToken" value="${view.csrfToken}">
<input type="hidden" name="callbackUrl" value="${view.callbackUrl}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required${kept}${focusEmail}${describedBy}${invalid}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${focusPassword}${describedBy}${invalid}>
<button type="submit">Sign in</button>
</form>
${renderAlternatives(shell, view)}
${passkey}${links}`;
  let content: SafeHtml;
  if (signedIn === undefined) {
    const offerCode = renderOfferCode(shell, view) || renderMailedCode(shell, view);
    content = markup`${renderNotice(notice)}
${offerCode}${
      offerCode !== false &&
      view.identityOffer?.askCode === false &&
      markup`
<p class="or">or</p>`
    }
${form}`;
  } else {
    // A notice here is about the form (a failed switch, a throttled one): show it open.
    const open = (notice !== undefined || email !== undefined) && markup` open`;
    content = markup`<div class="who">
<p id="${whoId}">${renderWho(signedIn.user)}</p>
<a class="button" href="${signedIn.continueUrl}">Continue</a>
${renderSignOutForm(shell, { csrfToken: view.csrfToken, callbackUrl: signedIn.signOutUrl, secondary: true, describedBy: whoId })}
</div>
<details${open}>
<summary>Sign in as someone else</summary>
${renderNotice(notice)}
${form}
</details>`;
  }
  content = markup`${content}
<script>${trustedHtml(passkeyScript)}</script>`;
  return renderDocument(shell, `Sign in to ${shell.productName}`, content, notice);
}
