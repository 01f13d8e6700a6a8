import { afterPasswordParam, readRetryAfter } from './retry-after.js';

/** What a page tells the person about what just happened. */
export interface Notice {
  /** `error` is announced at once (role="alert"); `info` politely (role="status"). */
  tone: 'error' | 'info';
  text: string;
  /** The email and password as typed were refused: the fields are marked invalid. */
  fieldsInvalid?: boolean;
}

/** The sign-in page's query parameter for "you have just signed out" (set by the sign-out page). */
export const signedOutParam = 'signedOut';

const secondsPerMinute = 60;
const minutesPerHour = 60;

const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'}`;

/** "less than a minute", "15 minutes", "1 hour and 5 minutes": rounded up, never too early. */
export function formatWait(seconds: number): string {
  if (seconds < secondsPerMinute) return 'less than a minute';
  const minutes = Math.ceil(seconds / secondsPerMinute);
  if (minutes < minutesPerHour) return plural(minutes, 'minute');
  const hours = Math.floor(minutes / minutesPerHour);
  const rest = minutes % minutesPerHour;
  return rest === 0
    ? plural(hours, 'hour')
    : `${plural(hours, 'hour')} and ${plural(rest, 'minute')}`;
}

// One message for an unknown email, a wrong password and a disabled account: the page must not
// say which, as Auth.js's answer does not.
const wrongCredentials: Notice = {
  tone: 'error',
  text: 'Wrong email or password. Check both and try again.',
  fieldsInvalid: true,
};

const secondStepAgain: Notice = {
  tone: 'error',
  text: 'Your sign-in took too long to finish. Enter your password again, then the code from your authenticator app.',
};

/** The second step's notices (src/pages/signin/signin-page.ts). */
export const secondStepNotices = {
  required: {
    tone: 'info',
    text: 'Your password was right. Now enter the 6-digit code your authenticator app shows for this account.',
  },
  invalid: {
    tone: 'error',
    text: 'That code is not right, or it was used already. Enter the code your app shows now (a new one comes every 30 seconds).',
    fieldsInvalid: true,
  },
} as const satisfies Record<string, Notice>;

/** The enrolment step's notices (SECOND_FACTOR=required; src/pages/signin/signin-page.ts). */
export const enrolmentNotices = {
  invalid: {
    tone: 'error',
    text: 'That code is not right. Enter the code your app shows now for this account (a new one comes every 30 seconds).',
    fieldsInvalid: true,
  },
  done: {
    tone: 'info',
    text: 'You are signed in.',
  },
} as const satisfies Record<string, Notice>;

/** Which of the enrolment step's fields a refusal was about (`paused`: a second factor's lock). */
export type EnrolmentRefusal = 'otp' | 'email_code' | 'email_code_missing' | 'paused';

/**
 * The enrolment step's notice: what it asks for (with mail, the code mailed to `codeSentTo`
 * beside the app's; without, an operator's enrolment code) or why a post was refused.
 */
export function enrolmentNotice(
  codeSentTo: string | null,
  refused: EnrolmentRefusal | undefined,
  retryAfterSeconds?: number,
): Notice {
  if (refused === 'otp') return enrolmentNotices.invalid;
  if (refused === 'paused') return enrolmentPaused(retryAfterSeconds);
  if (codeSentTo === null)
    return refused === 'email_code'
      ? {
          tone: 'error',
          text: 'That enrolment code is not right, or it was used or has expired. Check it with your administrator, or ask them for a new one.',
          fieldsInvalid: true,
        }
      : {
          tone: refused === undefined ? 'info' : 'error',
          text: 'Your password was right. Every account here needs two-step sign-in, and this service cannot mail you a code to make sure it is you: ask your administrator for an enrolment code, then enter it below with the code your authenticator app shows.',
        };
  switch (refused) {
    case 'email_code':
      return {
        tone: 'error',
        text: `That is not the code we mailed to ${codeSentTo}. Enter the code of the newest mail from us: each sign-in mails a new one, and a code stops working after five wrong tries (then sign in again for a new one).`,
        fieldsInvalid: true,
      };
    case 'email_code_missing':
      return {
        tone: 'error',
        text: `Enter the code we mailed to ${codeSentTo} too: it makes sure it is you who sets up two-step sign-in.`,
        fieldsInvalid: true,
      };
    default:
      return {
        tone: 'info',
        text: `Your password was right. Every account here needs two-step sign-in. To make sure it is you, we have mailed a code to ${codeSentTo}: enter it below with the code your authenticator app shows.`,
      };
  }
}

/** "Please try again in 15 minutes." ("later", without a wait). */
const tryAgain = (retryAfterSeconds: number | undefined) =>
  retryAfterSeconds === undefined
    ? 'Please try again later.'
    : `Please try again in ${formatWait(retryAfterSeconds)}.`;

// The account's second-factor lock (src/account/model/factor-throttle.ts) holds the enrolment's
// codes too: wrong ones were typed after the right password.
function enrolmentPaused(retryAfterSeconds: number | undefined): Notice {
  const when = tryAgain(retryAfterSeconds);
  return {
    tone: 'error',
    text: `Too many wrong codes. Setting up two-step sign-in is paused for now to keep this account safe, and your codes were not checked this time. ${when}`,
  };
}

// The account had its share of enrolment mails in the window: no new code was sent.
const enrolmentMailLimited: Notice = {
  tone: 'error',
  text: 'Your password was right, but we have mailed this account several codes in the last few minutes, so no new one was sent. Please wait a few minutes, then sign in again for a new code.',
};

const enrolmentAgain: Notice = {
  tone: 'error',
  text: 'Your sign-in took too long to finish. Enter your password again, then set up your authenticator app.',
};

// The enrolment's challenge is gone, or its mailed code was tried five times: a new sign-in
// mails a new code.
const enrolmentCodeAgain: Notice = {
  tone: 'error',
  text: 'Your sign-in took too long to finish, or the code we mailed was tried too often. Enter your password again: we will mail you a new code.',
};

// SECOND_FACTOR=required and the account's second factor is a passkey: the password alone may
// not lead to enrolling an app (whoever holds only the password would get in).
const passkeyRequired: Notice = {
  tone: 'error',
  text: 'Your password was right, but this account needs its passkey to sign in: choose "Sign in with a passkey" now. Lost your passkey? Ask your administrator to reset your second factor.',
};

const passkeyUnverified: Notice = {
  tone: 'error',
  text: 'That passkey did not check your PIN, fingerprint or face, so it is only one of the two steps this account needs. Sign in with your email and password first, then choose "Sign in with a passkey" again.',
};

function throttled(retryAfterSeconds: number | undefined): Notice {
  const when = tryAgain(retryAfterSeconds);
  return {
    tone: 'error',
    // Said outright because people who are told nothing retry with the right password at once.
    text: `Too many sign-in attempts. Sign-in is paused for now to keep accounts safe, and your password was not checked this time. ${when}`,
  };
}

// A second factor's lock (src/account/model/factor-throttle.ts): the password was right, the codes
// are paused; a recovery code is checked through the lock, so the owner is told of it.
function codesPaused(retryAfterSeconds: number | undefined): Notice {
  const when =
    retryAfterSeconds === undefined
      ? 'Please try again later'
      : `Please try again in ${formatWait(retryAfterSeconds)}`;
  return {
    tone: 'error',
    text: `Too many wrong codes. Codes for this account are paused for now to keep it safe, and your code was not checked this time. ${when}, or sign in with a recovery code.`,
  };
}

// Said only after the password was proven (src/auth/signin/authorize.ts), so it tells a guesser nothing.
// Without mail (production without SMTP_URL) no link was sent: only an operator can confirm it.
function emailUnverified(email: string | undefined, mailOn: boolean): Notice {
  const where = email ?? 'your address';
  return {
    tone: 'error',
    text: mailOn
      ? `Confirm your address first: we have sent a new link to ${where}. Open it, then sign in again. Nothing arrived? Check your spam folder, or sign in again for another link.`
      : `Your address (${where}) has not been confirmed yet, so you cannot sign in. Ask your administrator to confirm it.`,
  };
}

const formExpired: Notice = {
  tone: 'error',
  text: 'This form expired before it was sent, so nothing happened. Please try again. If this keeps happening, allow cookies for this site.',
};

const sessionEnded: Notice = {
  tone: 'info',
  text: 'Your session has ended: you signed out elsewhere, your password or address changed, or it expired. Please sign in again to continue.',
};

const signedOut: Notice = { tone: 'info', text: 'You have signed out.' };

const somethingWrong: Notice = {
  tone: 'error',
  text: 'Something went wrong while signing in. Please try again.',
};

/** The sign-in page's answer to a form post the service could not take (503). */
export const signInBusy: Notice = {
  tone: 'error',
  text: 'The service is busy right now and could not check your details. Please try again in a few seconds.',
};

/** The sign-out page's answer to a form post the service could not take (503). */
export const signOutBusy: Notice = {
  tone: 'error',
  text: 'The service is busy right now and could not sign you out. Please try again in a few seconds.',
};

const passkeyRefused: Notice = {
  tone: 'error',
  text: 'That passkey was not accepted: it may have been removed from your account, or the attempt took too long. Try again, or sign in with your email and password.',
};

/**
 * The notice for the sign-in page's query string: Auth.js's `error` (and `code`) values, our own
 * `retryAfter` and `signedOut`. Values map to fixed texts; nothing from the URL is printed (the
 * address in "confirm your address first" is the kept one, src/pages/signin/kept-email.ts).
 */
export function signInNotice(
  params: URLSearchParams,
  email?: string,
  mailOn = true,
): Notice | undefined {
  const error = params.get('error');
  if (error === null || error === '') {
    return params.get(signedOutParam) === '1' ? signedOut : undefined;
  }
  switch (error) {
    case 'CredentialsSignin':
      switch (params.get('code')) {
        case 'rate_limited':
          return params.get(afterPasswordParam) === '1'
            ? codesPaused(readRetryAfter(params))
            : throttled(readRetryAfter(params));
        case 'email_unverified':
          return emailUnverified(email, mailOn);
        // The second step's page shows these itself; here its challenge is gone (expired, or
        // this is another browser): the password comes first again.
        case 'second_factor_required':
        case 'second_factor_invalid':
          return secondStepAgain;
        case 'second_factor_enrolment_required':
        case 'enrolment_code_required':
          return enrolmentAgain;
        case 'email_code_required':
        case 'email_code_invalid':
          return enrolmentCodeAgain;
        case 'email_code_limited':
          return enrolmentMailLimited;
        case 'passkey_required':
          return passkeyRequired;
        case 'passkey_unverified':
          return passkeyUnverified;
        default:
          return wrongCredentials;
      }
    case 'MissingCSRF':
      return formExpired;
    // A passkey's assertion refused (unknown or removed passkey, used or expired challenge).
    case 'WebAuthnVerificationError':
      return passkeyRefused;
    // Auth.js's code for "this page needs a session" (next-auth's useSession({ required })).
    case 'SessionRequired':
      return sessionEnded;
    default:
      return somethingWrong;
  }
}
