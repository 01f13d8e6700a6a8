import type { ErrorCode } from '../../http/errors.js';
import { formatWait, type Notice } from '../notices.js';

/** The forms of the account page, each posting to `<the page>/<its JSON route>` (`/account/…` by default). */
export type AccountForm =
  | 'profile'
  | 'password'
  | 'email'
  | 'verification'
  | 'session'
  | 'sessions'
  | 'totp_setup'
  | 'totp_confirm'
  | 'totp_disable'
  | 'recovery_codes'
  | 'passkey-rename'
  | 'passkey-remove'
  | 'identity-unlink'
  | 'access-token-create'
  | 'access-token-revoke';

/**
 * What a form post to the account pages ended with, when it did not succeed: an error code of
 * the catalogue (the action's), or the page's own `password_mismatch` (the repeated new
 * password differs; the JSON route has no repeat field).
 */
export interface FormFailure {
  code: ErrorCode | 'password_mismatch';
  /** The error's message (the password policy's reason for `weak_password`). */
  message: string;
  /** The field at fault and the reason, as the action named them (http/errors.ts). */
  field?: string | undefined;
  reason?: string | undefined;
  /** `Retry-After` of a throttled or shed attempt, in seconds. */
  retryAfterSeconds?: number | undefined;
}

/** The notice for a refused form, and the fields it is about (marked `aria-invalid`). */
export interface FormOutcome {
  notice: Notice;
  invalid: readonly string[];
}

/** The query parameter of the redirect after a success (Post/Redirect/Get). */
export const doneParam = 'done';

/** Each success the account page can report, by its `done` value; nothing else is printed. */
const successes = {
  profile: 'Your name was changed.',
  password: 'Password changed; your other sessions were signed out.',
  email:
    'We sent a link to the new address. Open it there and press its button: your address changes then, not before. Nothing arrived? Check the spelling and the spam folder.',
  verification: 'We mailed your address a confirmation link. Open it and press the button.',
  verified: 'Your address is already verified: there is nothing to confirm.',
  session: 'That session was signed out.',
  sessions: 'Your other sessions were signed out.',
  totp_setup: 'Scan the code with your authenticator app, then enter the code it shows.',
  totp_confirm:
    'Two-step sign-in is on. Keep your recovery codes safe: each one signs you in once if you lose your phone.',
  totp_disable: 'Two-step sign-in is off: your password alone now signs you in.',
  recovery_codes: 'New recovery codes were made; the old ones no longer work.',
  'passkey-rename': 'The passkey was renamed.',
  'passkey-remove': 'The passkey was removed: it can no longer sign in to your account.',
  'passkey-added': 'Passkey added. Next time, choose "Sign in with a passkey" on the sign-in page.',
  'identity-unlink': 'The provider was unlinked: it can no longer sign in to your account.',
  'access-token-create':
    'Access token created. Copy it now from "Access tokens" below: it is not shown again.',
  'access-token-revoke':
    'The access token was revoked: it can no longer get tokens for your account.',
} as const satisfies Record<AccountForm | 'verified' | 'passkey-added', string>;

/** What the page says after its script's passkey registration was refused (`done=`). */
const refusals: Record<string, string> = {
  'passkey-refused':
    'The new passkey was not accepted, so none was added. Please try again; if this device already holds a passkey for your account, use that one.',
};

/** The success notice of a form whose answer is a page of its own (not a redirect). */
export const shownNotice = (form: AccountForm): Notice => ({ tone: 'info', text: successes[form] });

/** The success notice for the account page's query string, or none. */
export function accountDoneNotice(params: URLSearchParams): Notice | undefined {
  const done = params.get(doneParam);
  if (done !== null && Object.hasOwn(refusals, done)) {
    return { tone: 'error', text: refusals[done] as string };
  }
  return done !== null && Object.hasOwn(successes, done)
    ? { tone: 'info', text: successes[done as keyof typeof successes] }
    : undefined;
}

const formExpired =
  'This form expired before it was sent, so nothing changed. Please try again. If this keeps happening, allow cookies for this site.';

const tryAgainIn = (seconds: number | undefined) =>
  seconds === undefined ? 'Please try again later.' : `Please try again in ${formatWait(seconds)}.`;

const error = (text: string, invalid: readonly string[] = []): FormOutcome => ({
  notice: { tone: 'error', text },
  invalid,
});

type Outcome = (form: AccountForm, failure: FormFailure) => FormOutcome;

const passwordForToken = 'Enter your current password to create an access token.';

const invalidCode: Outcome = (form, failure) => {
  if (failure.reason === 'replacement_unproven')
    return error(
      'This set-up was started without a code from your current app, so it cannot replace it. Start the move to a new app again.',
    );
  if (form === 'totp_setup')
    return error(
      'That is not a code your current app shows now, nor an unused recovery code, so nothing changed.',
      ['code'],
    );
  return error(
    failure.reason === 'no_totp'
      ? 'Turn on two-step sign-in first.'
      : 'That code is not right, or it was used already. Enter the code your app shows now.',
    ['code'],
  );
};

const invalidCredentials: Outcome = (form) => {
  if (form === 'passkey-remove')
    return error('Your current password is not correct, so the passkey was not removed.', [
      'currentPassword',
    ]);
  if (form === 'access-token-create')
    return error('Your current password is not correct, so no access token was created.', [
      'currentPassword',
    ]);
  if (form !== 'email' && form !== 'password')
    return error('Your current password is not correct, so nothing changed.', ['currentPassword']);
  return form === 'email'
    ? error('Your current password is not correct, so your address was not changed.', [
        'currentPassword',
      ])
    : error('Your current password is not correct, so your password was not changed.', [
        'currentPassword',
      ]);
};

/** The create form's field at fault: the password, the expiry (a tampered form), or the name. */
function tokenFieldRefused(failure: FormFailure): FormOutcome {
  if (failure.field === 'currentPassword') return error(passwordForToken, ['currentPassword']);
  if (failure.field === 'expiresInDays')
    return error('Choose one of the expiries offered.', ['expiresInDays']);
  return error('Enter a name of 1 to 200 characters.', ['name']);
}

const invalidField: Outcome = (form, failure) => {
  if (form === 'email') {
    if (failure.field === 'currentPassword')
      return error('Enter your current password to change your address.', ['currentPassword']);
    return error(
      failure.reason === 'same_address'
        ? 'That is already the address of your account.'
        : 'Enter the new address, like name@example.com.',
      ['email'],
    );
  }
  if (form === 'passkey-remove')
    return error('Enter your current password to remove a passkey.', ['currentPassword']);
  if (form === 'access-token-create') return tokenFieldRefused(failure);
  return form === 'profile' || form === 'passkey-rename'
    ? error('Enter a name of 1 to 200 characters.', ['name'])
    : error('Fill in your current password and the new one.', ['currentPassword', 'newPassword']);
};

const rateLimited: Outcome = (form, failure) => {
  if (form === 'verification' || form === 'email')
    return error(
      `Too many attempts or mails asked for; nothing was sent this time. ${tryAgainIn(failure.retryAfterSeconds)}`,
    );
  // Said outright: people who are told nothing retry with the right password at once.
  return error(
    `Too many wrong passwords. Password checks for your account are paused for now to keep it safe, and your password was not checked this time. ${tryAgainIn(failure.retryAfterSeconds)}`,
  );
};

const busy: Outcome = (_form, failure) =>
  error(
    `The service is busy right now, so nothing changed. ${tryAgainIn(failure.retryAfterSeconds)}`,
  );

/** What the page says per code; any other code: the catalogue's message. */
const outcomes: Partial<Record<FormFailure['code'], Outcome>> = {
  csrf: () => error(formExpired),
  not_found: (form, failure) => {
    if (form === 'passkey-rename' || form === 'passkey-remove')
      return error('That passkey is no longer on your account.');
    return form === 'access-token-revoke'
      ? error('That access token was revoked already, or it expired.')
      : error(failure.message);
  },
  conflict: (form, failure) =>
    form === 'access-token-create'
      ? error(`${failure.message} No token was created.`)
      : error(failure.message),
  reauthentication_required: (form) =>
    error(
      form === 'access-token-create'
        ? passwordForToken
        : 'Enter your current password to remove a passkey.',
      ['currentPassword'],
    ),
  invalid_code: invalidCode,
  second_factor_required: () => error('Enter the code from your authenticator app too.', ['code']),
  last_second_factor: (form) =>
    error(
      form === 'passkey-remove'
        ? 'Nothing was removed: every account here needs a second factor, and this passkey is your last one. Set up an authenticator app first, then remove it.'
        : 'Two-step sign-in stays on: every account here needs a second factor. Add a passkey first if you want to turn off the authenticator app.',
    ),
  second_factor_invalid: () =>
    error('The code from your authenticator app is not right, or was used already.', ['code']),
  invalid_credentials: invalidCredentials,
  weak_password: (_form, failure) =>
    error(`${failure.message} Your password was not changed.`, ['newPassword']),
  password_mismatch: () =>
    error(
      'The new password and its repetition differ. Type the same new password in both fields.',
      ['newPassword', 'newPasswordRepeat'],
    ),
  invalid_field: invalidField,
  rate_limited: rateLimited,
  overloaded: busy,
  unavailable: busy,
};

/**
 * What the account page says about a refused form: fixed texts per code (the password
 * policy's own reason for a weak password), and which of the form's fields to mark.
 */
export function formOutcome(form: AccountForm, failure: FormFailure): FormOutcome {
  const outcome = outcomes[failure.code];
  return outcome === undefined ? error(failure.message) : outcome(form, failure);
}
