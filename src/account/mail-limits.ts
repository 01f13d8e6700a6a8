import { createHash } from 'node:crypto';
import { HttpError } from '../http/errors.js';
import type { ThrottleLimit, ThrottleStore } from '../auth/signin/throttle-store.js';
import { clientGroup } from '../traffic/client-group.js';

/** How many mail requests one address and one client may make per window. */
export interface MailRequestLimits {
  /** Per e-mail and purpose: asked for by one client, and sent (THROTTLE_EMAIL_MAX_FAILURES). */
  emailMax: number;
  /** Per client address (IPv4, IPv6 /64; THROTTLE_IP_MAX_FAILURES). */
  ipMax: number;
  /** THROTTLE_WINDOW_SECONDS. */
  windowSeconds: number;
}

/**
 * What a mail is for: each purpose has budgets of its own, so spending one (a stranger's
 * sign-ups for an address) never touches another (its owner's password reset).
 */
export type MailPurpose = 'reset' | 'signup' | 'email_change' | 'email_signin';

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/**
 * Limits on requests that send mail, in counters of their own in the throttle's shared table
 * (asking for mail to someone's address never locks their sign-in). Three budgets:
 *
 * - **per client** (`ipMax`, all purposes): every request counts; only that client spends it.
 * - **per e-mail, purpose and client** (`emailMax`): every request counts, whether the address
 *   has an account or not (the same work for both: one upsert), so its 429 tells nothing; and
 *   since the client is part of the key, a stranger spends only their own share, never the
 *   owner's.
 * - **mails sent per e-mail and purpose** (`emailMax`), charged after the answer, only when a
 *   mail is really sent, so that many clients together cannot flood one mailbox. Past it no
 *   further mail of that purpose goes out in the window, silently (the answer was given
 *   already, and must not differ); what was sent stays valid, so an owner whose reset budget a
 *   flood used up already holds live reset links.
 *
 * Refused (the first two): 429 `rate_limited` with Retry-After until the window ends.
 */
export function createMailRequestLimits(
  store: ThrottleStore,
  limits: MailRequestLimits,
  now: () => number,
) {
  const windowMs = limits.windowSeconds * 1000;
  const emailLimit: ThrottleLimit = { maxFailures: limits.emailMax, windowMs, lockMs: windowMs };
  const ipLimit: ThrottleLimit = { maxFailures: limits.ipMax, windowMs, lockMs: windowMs };
  const retryAfter = (until: number, at: number) => Math.max(1, Math.ceil((until - at) / 1000));
  return {
    /**
     * The longest an address's spent sent budget stays spent (its lock is one window, from the
     * mail that spent it): a mailed link that lives this long outlasts the wait for the next.
     */
    sentBudgetSpentSeconds: limits.windowSeconds,
    /**
     * Charges one request for mail of `purpose` to `email`: to the client, then to the
     * (e-mail, purpose, client); 429 past either limit.
     */
    async charge(purpose: MailPurpose, email: string, ip: string): Promise<void> {
      const at = now();
      const group = clientGroup(ip);
      // The client first: one flooding client does not run up anyone's e-mail counter.
      const charges: [string, ThrottleLimit][] = [
        [`mail-ip:${digest(group)}`, ipLimit],
        [`mail-${purpose}:${digest(`${email}\n${group}`)}`, emailLimit],
      ];
      for (const [key, limit] of charges) await chargeOne(key, limit, at);
    },
    /**
     * Charges a mail about to be sent to `email` for `purpose`; false when that address has had
     * its window's share of them (the caller then sends nothing, and logs it).
     */
    async chargeSent(purpose: MailPurpose, email: string): Promise<boolean> {
      const charged = await store.charge(
        `mail-sent-${purpose}:${digest(email)}`,
        emailLimit,
        now(),
      );
      return charged.failures <= emailLimit.maxFailures;
    },
    /**
     * Charges a mail that only the account's holder can ask for (a resend from a session, the
     * sign-in refusal's "confirm your address" after the right password): a counter per
     * account, so nobody else's requests for that address can use it up.
     */
    async chargeAccount(userId: string): Promise<void> {
      await chargeOne(`mail-user:${digest(userId)}`, emailLimit, now());
    },
  };

  async function chargeOne(key: string, limit: ThrottleLimit, at: number): Promise<void> {
    const charged = await store.charge(key, limit, at);
    if (charged.failures > limit.maxFailures)
      throw new HttpError('rate_limited', {
        'retry-after': String(retryAfter(charged.lockedUntil, at)),
      });
  }
}

export type MailRequestLimiter = ReturnType<typeof createMailRequestLimits>;

/** The log line's fields and words when a mail is not sent for its address's budget. */
export const overBudget = (purpose: MailPurpose) => ({ purpose, reason: 'address_budget' });
export const overBudgetMessage =
  'mail not sent: its address has had its share of this kind of mail in the window';
