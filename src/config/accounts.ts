import * as z from 'zod/mini';
import { integer, list, oneOf, trueFalse } from './read/kinds.js';
import { noted } from './read/notes.js';

const auditKeyMinBytes = 32;

/**
 * The account routes (src/account/): how recent a password proof must be for (recent) routes,
 * how long an e-mailed reset or verification secret lives, how long an invitation does, whether
 * anyone may sign up, whether a mailed link or code signs in, whether an unverified address may
 * sign in, whether a sign-in from a new device is mailed to the owner, how long the audit log
 * keeps an entry, and the key its head is sealed under.
 */
export const accounts = z.pipe(
  z.object({
    REAUTH_MAX_AGE: integer(1, 86400, 600),
    MAIL_TOKEN_TTL: integer(1, 86400, 3600),
    // Seven days by default: long enough for a weekend and a slow mailbox; 30 days at most.
    INVITE_TTL: integer(1, 2_592_000, 604_800),
    SIGNUP: oneOf(['closed', 'open'], 'closed'),
    // Off by default: a way in an operator chooses, and it needs mail (src/mail/start.ts).
    EMAIL_SIGNIN: oneOf(['off', 'on'], 'off'),
    // False by default: accounts an operator made before it existed are all unverified, and
    // turning it on by default would lock every one of them out.
    REQUIRE_VERIFIED_EMAIL: trueFalse('false'),
    // A year by default; at least the 90 days a person's own history shows, at most 10 years.
    AUDIT_RETENTION_DAYS: integer(90, 3650, 365),
    // On by default: it is mailed only with mail on, and only after every factor was right.
    NEW_DEVICE_NOTICE: oneOf(['on', 'off'], 'on'),
    // Or AUDIT_KEY_FILE (src/config/read/secret-files.ts). Comma-separated: the first seals, every
    // one checks (rotation). Unset: the audit chain's head is not sealed (src/audit/seal.ts).
    AUDIT_KEY: noted(
      list().check(
        z.refine(
          (keys) => keys.every((key) => Buffer.byteLength(key) >= auditKeyMinBytes),
          `each comma-separated key must be at least ${auditKeyMinBytes} bytes; generate one with: openssl rand -base64 33`,
        ),
      ),
      { default: 'none (the head is not sealed)' },
    ),
  }),
  z.transform((e) => ({
    /** Seconds a sign-in or re-authentication counts as recent. */
    reauthMaxAgeSeconds: e.REAUTH_MAX_AGE,
    /** Seconds an e-mailed reset or verification link and code stay valid. */
    mailTokenTtlSeconds: e.MAIL_TOKEN_TTL,
    /** Seconds an invitation's link stays valid (`gatehouse users invite`). */
    inviteTtlSeconds: e.INVITE_TTL,
    /** SIGNUP=open: anyone may create an account (`POST /api/account/signup`). */
    signupOpen: e.SIGNUP === 'open',
    /** EMAIL_SIGNIN=on: a mailed link or code signs in (src/account/email-signin/). */
    emailSignIn: e.EMAIL_SIGNIN === 'on',
    /** REQUIRE_VERIFIED_EMAIL: a correct password of an unverified address signs nobody in. */
    requireVerifiedEmail: e.REQUIRE_VERIFIED_EMAIL,
    /** NEW_DEVICE_NOTICE=on: a sign-in from a new device and network is recorded and mailed. */
    newDeviceNotice: e.NEW_DEVICE_NOTICE === 'on',
    /** Days the audit log keeps an entry; older ones are pruned behind a checkpoint. */
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    /** Keys the audit chain's head and checkpoint are sealed under, current first; empty: none. */
    auditKeys: e.AUDIT_KEY,
  })),
);
