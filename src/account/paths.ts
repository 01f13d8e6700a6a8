import { defaultAccountPagesPath } from '../config/page-settings.js';

/*
 * Every path the account wing serves, declared once: the route table (register.ts), the pages,
 * the mails' links and the OpenAPI check read them from here; a view never defines its own.
 * The pages live under one root, `/account` unless ACCOUNT_PAGES_PATH moves them (an app
 * forwarding `/api/auth/*` and `/api/account/*` sets it to `/api/auth/account`, so its own
 * `/account` stays its own); the JSON routes stay at `/api/account`.
 */

/** The JSON routes' prefix (accounts spec). */
export const accountBasePath = '/api/account';

/** The signed-in account page and the flows' pages, each usable without script. */
export interface PagePaths {
  /** The account page; its forms post to `<account>/<the JSON route>`. */
  readonly account: string;
  readonly forgot: string;
  readonly reset: string;
  readonly lock: string;
  readonly verify: string;
  readonly invitation: string;
  readonly signup: string;
  readonly signupConfirm: string;
}

/** The pages under `root` (ACCOUNT_PAGES_PATH, already checked: no trailing slash). */
export function pagePathsUnder(root: string = defaultAccountPagesPath): PagePaths {
  return {
    account: root,
    forgot: `${root}/password/forgot`,
    reset: `${root}/password/reset`,
    lock: `${root}/lock`,
    verify: `${root}/email/verify`,
    invitation: `${root}/invitation`,
    signup: `${root}/signup`,
    signupConfirm: `${root}/signup/confirm`,
  };
}

/** The pages' paths as a page's shell knows them (its ACCOUNT_PAGES_PATH). */
export const pagePathsOf = (shell: { readonly accountPath: string }): PagePaths =>
  pagePathsUnder(shell.accountPath);
