/*
 * Every path the account wing serves, declared once: the route table (register.ts), the pages,
 * the mails' links and the OpenAPI check read them from here; a view never defines its own.
 */

/** The JSON routes' prefix (accounts spec). */
export const accountBasePath = '/api/account';

/** The signed-in account page; its forms post to `/account/<the JSON route>`. */
export const accountPagePath = '/account';

/** The flows' pages, each usable without script. */
export const pagePaths = {
  forgot: '/account/password/forgot',
  reset: '/account/password/reset',
  lock: '/account/lock',
  verify: '/account/email/verify',
  invitation: '/account/invitation',
  signup: '/account/signup',
  signupConfirm: '/account/signup/confirm',
} as const;
