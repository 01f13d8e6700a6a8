import * as z from 'zod/mini';
import { integer } from './kinds.js';

/**
 * The account routes (src/account/): how recent a password proof must be for (recent) routes,
 * and how long an e-mailed reset or verification secret lives.
 */
export const accounts = z.pipe(
  z.object({
    REAUTH_MAX_AGE: integer(1, 86400, 600),
    MAIL_TOKEN_TTL: integer(1, 86400, 3600),
  }),
  z.transform((e) => ({
    /** Seconds a sign-in or re-authentication counts as recent. */
    reauthMaxAgeSeconds: e.REAUTH_MAX_AGE,
    /** Seconds an e-mailed reset or verification link and code stay valid. */
    mailTokenTtlSeconds: e.MAIL_TOKEN_TTL,
  })),
);
