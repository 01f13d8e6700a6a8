import * as z from 'zod/mini';
import { integer } from './kinds.js';

/**
 * The account routes (src/account/): how recent a password proof must be for (recent) routes,
 * how long an e-mailed reset or verification secret lives, and how long an invitation does.
 */
export const accounts = z.pipe(
  z.object({
    REAUTH_MAX_AGE: integer(1, 86400, 600),
    MAIL_TOKEN_TTL: integer(1, 86400, 3600),
    // Seven days by default: long enough for a weekend and a slow mailbox; 30 days at most.
    INVITE_TTL: integer(1, 2_592_000, 604_800),
  }),
  z.transform((e) => ({
    /** Seconds a sign-in or re-authentication counts as recent. */
    reauthMaxAgeSeconds: e.REAUTH_MAX_AGE,
    /** Seconds an e-mailed reset or verification link and code stay valid. */
    mailTokenTtlSeconds: e.MAIL_TOKEN_TTL,
    /** Seconds an invitation's link stays valid (`gatehouse users invite`). */
    inviteTtlSeconds: e.INVITE_TTL,
  })),
);
