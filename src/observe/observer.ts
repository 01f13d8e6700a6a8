import type { Front } from '../http/front-door.js';
import type { GateLoad } from '../traffic/work-gate.js';

/** How a sign-in ended, as `gatehouse_signins_total{outcome}` counts it. */
export type SignInOutcome =
  'success' | 'invalid' | 'throttled' | 'overloaded' | 'unavailable' | 'csrf' | 'error';

/** Which throttle counter reached its limit. */
export type ThrottleScope = 'email' | 'ip' | 'email_attempts' | 'ip_attempts';

/**
 * Why sessions were revoked by the server: one ended (sign-out, or replaced by signing in
 * again), all of a user's, or the oldest past `SESSIONS_PER_USER_MAX`.
 */
export type RevocationReason = 'ended' | 'user' | 'limit';

export type { GateLoad } from '../traffic/work-gate.js';

/**
 * What the service tells whoever watches it. Every call is cheap and never throws; with
 * metrics off it is `noObserver`, whose calls do nothing and which times no request.
 */
export interface Observer {
  /**
   * Times every request of a site: `front` goes first at its front door, `stop` when it closes.
   * Absent when nothing is observed, so no request pays for it.
   */
  readonly timeRequests?: (hasRoute: (path: string) => boolean) => { front: Front; stop(): void };
  signIn(outcome: SignInOutcome): void;
  throttleLock(scope: ThrottleScope): void;
  databaseError(): void;
  sessionsRevoked(reason: RevocationReason, count: number): void;
  readiness(ready: boolean): void;
  watchHasher(load: GateLoad, limits: { concurrency: number; queueMax: number }): void;
  watchDoor(load: GateLoad): void;
  /** This process's delivery worker sent a mail, or marked one failed for good. */
  mailSent(): void;
  mailFailed(): void;
  /** The outbox's backlog, read (one indexed query) only when metrics are scraped. */
  watchMail(read: () => Promise<MailBacklog>): void;
  /** An account event of this type was recorded (src/account/model/events.ts). */
  accountEvent(type: string): void;
  /** This process's webhook worker had a delivery answered 2xx, or marked one failed for good. */
  webhookSent(): void;
  webhookFailed(): void;
  /** The webhook outbox's backlog, read only when metrics are scraped. */
  watchWebhooks(read: () => Promise<MailBacklog>): void;
}

export interface MailBacklog {
  /** Mails queued or being sent. */
  queued: number;
  /** Age of the oldest of them; 0 when there is none. */
  oldestAgeSeconds: number;
  /** Mails held: queued where no SMTP_URL was set, waiting for an instance that has one. */
  held?: number;
}

const ignore = () => undefined;

export const noObserver: Observer = {
  signIn: ignore,
  throttleLock: ignore,
  databaseError: ignore,
  sessionsRevoked: ignore,
  readiness: ignore,
  watchHasher: ignore,
  watchDoor: ignore,
  mailSent: ignore,
  mailFailed: ignore,
  watchMail: ignore,
  accountEvent: ignore,
  webhookSent: ignore,
  webhookFailed: ignore,
  watchWebhooks: ignore,
};
