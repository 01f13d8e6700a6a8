import { formatWait, type Notice } from '../../pages/notices.js';
import { readRetryAfter } from '../../pages/retry-after.js';

/*
 * What the sign-in page says after a sign-in by e-mail did not go through: the request for the
 * mail (`error=EmailSignInError`, before any mail) and the link or code that came back
 * (`error=CredentialsSignin`), each in words a person can act on. Nothing from the URL is
 * printed but a wait, read as a number.
 */

/** The refusal codes of a mailed link or code (./mail-proof.ts). */
export const mailProofRefusals = {
  /** The link is unknown, used, expired or void (a password change, a disable since). */
  link: 'email_link_invalid',
  /** No live code of this address matches in this browser. */
  code: 'email_code_invalid',
} as const;

/** The refusal codes of the request for the mail (./ask-mail.ts). */
export const askRefusals = {
  /** The address cannot be one (or none was typed). */
  address: 'email_invalid',
  /** The client's own mail budget is spent. */
  limited: 'rate_limited',
} as const;

const error = (text: string): Notice => ({ tone: 'error', text });

function askNotice(params: URLSearchParams): Notice {
  if (params.get('code') === askRefusals.limited) {
    const seconds = readRetryAfter(params);
    const when = seconds === undefined ? 'later' : `in ${formatWait(seconds)}`;
    return error(
      `Too many sign-in mails were asked for from here. Nothing was sent; try again ${when}, or sign in with your password.`,
    );
  }
  // Not marked invalid: the password field would be marked with it, and was not what was wrong.
  return error('Type your email address, then press “Email me a sign-in link”.');
}

/**
 * The sign-in page's notice for these query parameters, when it is about a sign-in by e-mail;
 * `codeForm`: the code form is shown again (a wrong code).
 */
export function emailSignInNotice(
  params: URLSearchParams,
): { notice: Notice; codeForm: boolean } | undefined {
  const error_ = params.get('error');
  if (error_ === 'EmailSignInError') return { notice: askNotice(params), codeForm: false };
  if (error_ !== 'CredentialsSignin') return undefined;
  switch (params.get('code')) {
    case mailProofRefusals.code:
      // The code form's own field is marked, not the password form's.
      return {
        notice: error(
          'That code is not right, or it expired or was used. Type the code from the newest mail, in the browser where you asked for it, or open its link.',
        ),
        codeForm: true,
      };
    case mailProofRefusals.link:
      return {
        notice: error(
          'That sign-in link can no longer be used: it expired, was used already, or your account changed since. Ask for a new one below.',
        ),
        codeForm: false,
      };
    default:
      return undefined;
  }
}
