import type { Notice } from '../../pages/notices.js';

/*
 * What the sign-in page says after an identity provider's sign-in that did not sign in: each
 * refusal in words a person can act on (./provider-sign-in.ts names them). Nothing from the URL
 * is printed but the provider's name, looked up from the configured ones.
 */

const error = (text: string): Notice => ({ tone: 'error', text });

function accessDenied(code: string | null, provider: string): Notice {
  switch (code) {
    case 'identity_no_account':
      return error(
        `There is no account here for your ${provider} account, and new accounts cannot be made with it. Sign in with your email and password, or ask your administrator for an invitation.`,
      );
    case 'identity_no_address':
      return error(
        `${provider} did not tell us your email address, so no account can be made with it. Sign in with your email and password instead.`,
      );
    case 'identity_address_unverified':
      return error(
        `${provider} has not confirmed that the email address it gave belongs to you, so it cannot sign you in here. Confirm the address at ${provider} and try again, or sign in with your email and password.`,
      );
    case 'identity_linked_elsewhere':
      return error(
        `That ${provider} account already signs in to another account here. Sign out first to use it, or link a different ${provider} account.`,
      );
    case 'account_disabled':
      return error(
        `The account your ${provider} account signs in to is disabled. Ask your administrator to enable it.`,
      );
    default:
      return error(`${provider} told us who you are, but it is not enough to sign you in here.`);
  }
}

/** The mailed code's answers (./offer-code.ts), as Auth.js's credentials refusals carry them. */
function offerCodeNotice(code: string | null): Notice | undefined {
  switch (code) {
    case 'identity_code_sent':
      return {
        tone: 'info',
        text: 'We mailed a code to the address of the account here. Enter it below to link your sign-in to it and continue. Nothing arrived? Check the spam folder, or send another.',
      };
    case 'identity_code_invalid':
      return error(
        'That is not the code we mailed, or it was tried too often or has expired. Check the mail and try again, or send another.',
      );
    case 'identity_code_limited':
      return error(
        'We have mailed this account several codes in the last few minutes, so no new one was sent. Please wait a few minutes, or sign in with the account’s password.',
      );
    case 'identity_code_unavailable':
      return error('No code can be mailed here. Sign in with the account’s password or passkey.');
    case 'identity_offer_expired':
      return error(
        'Linking took too long or was already done. Sign in with the provider again to link it.',
      );
    default:
      return undefined;
  }
}

/** The notice for these query parameters, or undefined when they are not an identity's. */
export function identityNotice(
  params: URLSearchParams,
  providerName: (id: string | null) => string,
  offered: boolean,
): Notice | undefined {
  const provider = providerName(params.get('provider'));
  switch (params.get('error')) {
    case 'CredentialsSignin':
      return offerCodeNotice(params.get('code'));
    case 'OAuthAccountNotLinked':
      if (!offered)
        return error(
          'Linking took too long or was already done. Sign in with the provider again to link it.',
        );
      return params.get('code') === 'reauthenticate'
        ? {
            tone: 'info',
            text: `To link ${provider} to your account, confirm it is you: sign in once more below. ${provider} will then be linked.`,
          }
        : {
            tone: 'info',
            text: `An account here already uses your ${provider} address. Sign in to it below once (its password, a passkey, or a code we email to that address), and ${provider} will be linked to it: next time ${provider} signs you in directly.`,
          };
    case 'AccessDenied':
      return accessDenied(params.get('code'), provider);
    case 'OAuthSignInError':
      return error(
        `We could not reach ${provider} to sign you in. Please try again in a moment, or sign in with your email and password.`,
      );
    case 'OAuthCallbackError':
      return error(
        `Signing in with ${provider} did not complete: it was cancelled, took too long, or came back to another browser. Please try again.`,
      );
    default:
      return undefined;
  }
}
