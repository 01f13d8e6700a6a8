import { createHash } from 'node:crypto';
import { HttpError } from '../http/errors.js';
import type { ThrottleLimit, ThrottleStore } from '../auth/throttle-store.js';
import { clientGroup } from '../traffic/client-group.js';

/** How many mail requests (forgot) one address and one client may make per window. */
export interface MailRequestLimits {
  /** Per normalised e-mail, whether an account has it or not (THROTTLE_EMAIL_MAX_FAILURES). */
  emailMax: number;
  /** Per client address (IPv4, IPv6 /64; THROTTLE_IP_MAX_FAILURES). */
  ipMax: number;
  /** THROTTLE_WINDOW_SECONDS. */
  windowSeconds: number;
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/**
 * Limits on requests that send mail ("forgot password"): the sign-in throttle's numbers, but
 * counters of their own in the same shared table, so that asking for mail to someone's address
 * never locks their sign-in (a stranger could otherwise lock anyone out with forgot requests),
 * and so that the limit holds whether the address has an account or not (the same work for both:
 * one upsert per key). Every request counts; nothing is taken back (a mail was asked for).
 * Refused: 429 `rate_limited` with Retry-After until the window ends.
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
    /** Charges one mail request to the address, then to the e-mail; 429 past either limit. */
    async charge(email: string, ip: string): Promise<void> {
      const at = now();
      // The address first: one flooding client does not run up anyone's e-mail counter.
      const charges: [string, ThrottleLimit][] = [
        [`mail-ip:${digest(clientGroup(ip))}`, ipLimit],
        [`mail-email:${digest(email)}`, emailLimit],
      ];
      for (const [key, limit] of charges) await chargeOne(key, limit, at);
    },
    /**
     * Charges a mail that only someone who proved the account's password can ask for (the
     * sign-in refusal's "confirm your address"): its own counter per account, so nobody else's
     * requests for that address can use it up.
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
