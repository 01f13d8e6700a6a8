import * as z from 'zod/mini';
import {
  defaultAccountPagesPath,
  hexColourPattern,
  isAccountPagesPath,
  isLogoUrl,
  isProductName,
  isSignedInUrl,
  isSupportContact,
  pageDefaults,
  productNameMaxLength,
  type PageSettings,
} from './page-settings.js';
import { noted } from './read/notes.js';

const emptyIsUnset = (value: string | undefined) => (value === '' ? undefined : value);

/** The pages' product name, accent colour and logo, and where a signed-in visitor goes. */
export const pages = z.pipe(
  z.object({
    PAGE_PRODUCT_NAME: z._default(
      z
        .string()
        .check(
          z.refine(
            isProductName,
            `must be 1 to ${productNameMaxLength} characters, not blank, no control characters`,
          ),
        ),
      pageDefaults.productName,
    ),
    PAGE_ACCENT_COLOR: z._default(
      z.string().check(z.regex(hexColourPattern, 'must be a hex colour like #2563eb or #26e')),
      pageDefaults.accentColor,
    ),
    // Empty means no logo, like unset (platforms often cannot unset a variable).
    PAGE_LOGO_URL: noted(
      z.optional(
        z
          .string()
          .check(
            z.refine(
              (value) => value === '' || isLogoUrl(value),
              'must be an https:// URL or an absolute path like /logo.svg',
            ),
          ),
      ),
      { example: '/logo.svg' },
    ),
    // Empty means unset, as for the logo.
    SIGNED_IN_URL: noted(
      z.optional(
        z
          .string()
          .check(
            z.refine(
              (value) => value === '' || isSignedInUrl(value),
              'must be a path like /app or an absolute http(s):// URL on the public origin',
            ),
          ),
      ),
      { example: '/app' },
    ),
    // Empty means unset, as for the logo.
    APP_URL: noted(
      z.optional(
        z
          .string()
          .check(
            z.refine(
              (value) => value === '' || isSignedInUrl(value),
              'must be a path like / or an absolute http(s):// URL',
            ),
          ),
      ),
      { example: 'https://app.example.com/' },
    ),
    APP_SIGNIN_URL: noted(
      z.optional(
        z
          .string()
          .check(
            z.refine(
              (value) => value === '' || isSignedInUrl(value),
              'must be a path like /login or an absolute http(s):// URL',
            ),
          ),
      ),
      { example: '/login' },
    ),
    SUPPORT_CONTACT: noted(
      z.optional(
        z
          .string()
          .check(
            z.refine(
              (value) => value === '' || isSupportContact(value),
              'must be an https:// URL or an e-mail address',
            ),
          ),
      ),
      { example: 'support@example.com' },
    ),
    // The app's own /account stays the app's: the pages move under a prefix it forwards.
    ACCOUNT_PAGES_PATH: noted(
      z._default(
        z
          .string()
          .check(
            z.refine(
              isAccountPagesPath,
              'must be a path like /api/auth/account that no other route of Gatehouse takes (not /api/account or an Auth.js action such as /api/auth/signin), without a trailing slash',
            ),
          ),
        defaultAccountPagesPath,
      ),
      { example: '/api/auth/account' },
    ),
  }),
  z.transform((e): { page: PageSettings } => ({
    page: {
      productName: e.PAGE_PRODUCT_NAME,
      accentColor: e.PAGE_ACCENT_COLOR,
      logoUrl: e.PAGE_LOGO_URL === '' ? undefined : e.PAGE_LOGO_URL,
      signedInUrl: e.SIGNED_IN_URL === '' ? undefined : e.SIGNED_IN_URL,
      appUrl: emptyIsUnset(e.APP_URL) ?? emptyIsUnset(e.SIGNED_IN_URL),
      appSignInUrl: emptyIsUnset(e.APP_SIGNIN_URL),
      supportContact: emptyIsUnset(e.SUPPORT_CONTACT),
      accountPagesPath: e.ACCOUNT_PAGES_PATH,
    },
  })),
);
