/**
 * The pages' branding (`PAGE_PRODUCT_NAME`, `PAGE_ACCENT_COLOR`, `PAGE_LOGO_URL`) and where a
 * signed-in visitor goes (`SIGNED_IN_URL`).
 */
export interface PageSettings {
  readonly productName: string;
  /** `#rgb` or `#rrggbb`. */
  readonly accentColor: string;
  /** An https:// URL or an absolute path on this origin; undefined: no logo. */
  readonly logoUrl: string | undefined;
  /**
   * Where `/` sends a signed-in visitor, and where a sign-in from the sign-in page lands when
   * it was given no callbackUrl: a path on the public origin or an absolute http(s) URL.
   * Undefined: `/` shows who is signed in, and sign-in lands there.
   */
  readonly signedInUrl: string | undefined;
  /** Where every page's "Back to …" link leads (APP_URL, else SIGNED_IN_URL); undefined: none. */
  readonly appUrl?: string | undefined;
  /** The app's own sign-in page (APP_SIGNIN_URL): the end pages' "Sign in" leads there. */
  readonly appSignInUrl?: string | undefined;
  /** SUPPORT_CONTACT: an https:// URL or an e-mail address; undefined: none shown. */
  readonly supportContact?: string | undefined;
  /**
   * ACCOUNT_PAGES_PATH: where the account pages live (`/account`, its forms and the flows'
   * pages below it); absent: `defaultAccountPagesPath`.
   */
  readonly accountPagesPath?: string | undefined;
  /**
   * The origins besides this one a page's form may lead to: the configured identity providers'
   * (their buttons' posts answer with a redirect there, which Chromium holds to `form-action`).
   */
  readonly formTargets?: readonly string[] | undefined;
}

/** Where the account pages live unless ACCOUNT_PAGES_PATH moves them. */
export const defaultAccountPagesPath = '/account';

/** Auth.js's own actions under `/api/auth`: the pages may live beside them, never on them. */
const authActions = [
  'signin',
  'signout',
  'callback',
  'session',
  'csrf',
  'providers',
  'error',
  'verify-request',
  'webauthn-options',
];

/**
 * A place for the account pages: an absolute path of plain segments (no trailing slash, no
 * query), not `/`, and not on a path the service answers otherwise: the JSON routes
 * (`/api/account`), Auth.js's actions (`/api/auth/signin`, …), health and metrics. `/api/auth`
 * itself is taken by Auth.js, but a new segment below it (`/api/auth/account`) is free.
 */
export function isAccountPagesPath(value: string): boolean {
  if (!/^(?:\/[A-Za-z0-9][A-Za-z0-9._~-]*)+$/.test(value)) return false;
  const within = (prefix: string) => value === prefix || value.startsWith(`${prefix}/`);
  if (within('/api/account') || within('/api/health') || within('/metrics')) return false;
  if (value === '/api/auth' || value === '/api') return false;
  return !authActions.some((action) => within(`/api/auth/${action}`));
}

/** What the pages show when nothing is configured (also for apps built without the setting). */
export const pageDefaults: PageSettings = {
  productName: 'Gatehouse',
  // Blue with 5.2:1 contrast against white text (WCAG AA for normal text needs 4.5:1).
  accentColor: '#2563eb',
  logoUrl: undefined,
  signedInUrl: undefined,
};

export const productNameMaxLength = 60;

/** `#rgb` or `#rrggbb`: the only colour syntax accepted, so no CSS can ride in with it. */
export const hexColourPattern = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** A product name: printable, not blank, short enough for a heading on a phone. */
export function isProductName(value: string): boolean {
  return (
    value.trim().length > 0 &&
    value.length <= productNameMaxLength &&
    // Control characters (newlines included) have no place in a title or a heading.
    !/\p{Cc}/u.test(value)
  );
}

/** A support contact: an https:// URL (as a logo's) or a bare e-mail address. */
export function isSupportContact(value: string): boolean {
  if (/^[^\s@<>(),;:"\\\p{Cc}]+@[^\s@<>(),;:"\\\p{Cc}]+\.[^\s@<>(),;:"\\\p{Cc}]+$/u.test(value))
    return true;
  return !value.startsWith('/') && isLogoUrl(value);
}

/**
 * What both page URLs must pass: nothing a browser would read differently from what was
 * checked (backslashes, blanks, control characters), and a path on this origin (`/app`, never
 * `//host/…`, another origin in disguise). Answers 'path', the parsed absolute URL, or null.
 */
function readPageUrl(value: string): 'path' | URL | null {
  if (/[\s\\\p{Cc}]/u.test(value)) return null;
  if (value.startsWith('/')) return value.startsWith('//') ? null : 'path';
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

const withoutCredentials = (url: URL) => url.username === '' && url.password === '';

/** An https:// URL (no user name or password in it) or an absolute path on this origin. */
export function isLogoUrl(value: string): boolean {
  const url = readPageUrl(value);
  if (url === null || url === 'path') return url === 'path';
  return url.protocol === 'https:' && withoutCredentials(url);
}

/**
 * A path on this origin or an absolute http(s) URL without a user name or password: where a
 * signed-in visitor is sent.
 */
export function isSignedInUrl(value: string): boolean {
  const url = readPageUrl(value);
  if (url === null || url === 'path') return url === 'path';
  return (url.protocol === 'https:' || url.protocol === 'http:') && withoutCredentials(url);
}
