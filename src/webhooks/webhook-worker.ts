import {
  backoffMs,
  createLeasedWorker,
  type LeasedWorker,
  type LeasedWorkerLog,
} from '../outbox/leased-worker.js';
import type { WebhookDelivery, WebhookStore } from './webhook-outbox-store.js';
import { redactedUrl } from '../util/redacted-url.js';
import { signedHeaders } from './sign.js';

export interface WebhookDeliverySettings {
  /** Between polls while nothing is due: one indexed query each time. */
  idlePollMs: number;
  /** The first retry's delay (WEBHOOK_RETRY_SECONDS); each further one doubles, up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * How long a claimed delivery is this instance's alone. Longer than an attempt may take
   * (`attemptTimeoutMs`), so no other instance starts one while this one may still succeed.
   */
  leaseMs: number;
  /** How long an endpoint has to answer; past it the attempt counts as failed and is retried. */
  attemptTimeoutMs: number;
  /** Deliveries claimed by one poll, sent side by side. */
  batch: number;
  sweepIntervalMs: number;
}

export const defaultWebhookDeliverySettings: WebhookDeliverySettings = {
  idlePollMs: 1_000,
  retryBaseMs: 30_000,
  retryMaxMs: 60 * 60_000,
  leaseMs: 2 * 60_000,
  attemptTimeoutMs: 15_000,
  batch: 8,
  sweepIntervalMs: 10 * 60_000,
};

export interface WebhookEvents {
  webhookSent(): void;
  webhookFailed(): void;
}

export type WebhookLog = LeasedWorkerLog;

/** `stop` waits for the poll in flight (each attempt is bounded by its timeout), then gives back leases. */
export type WebhookWorker = Pick<LeasedWorker, 'start' | 'stop'>;

/** What a failed attempt left for `webhooks list`: the status, or why there was none. */
async function attempt(
  delivery: WebhookDelivery,
  secret: Buffer,
  now: number,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; error: string }> {
  try {
    const response = await fetch(delivery.endpoint, {
      method: 'POST',
      headers: signedHeaders(secret, delivery.eventId, delivery.payload, now),
      body: delivery.payload,
      // A redirect is the endpoint's misconfiguration, not a place to send a signed event.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The body is not read: only the status counts, and an endless body must not hold us.
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true };
    return { ok: false, error: `answered ${response.status}` };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const message = cause instanceof Error ? cause.message : String(cause);
    // fetch quotes the URL in some of its errors ("Failed to parse URL from …"): what is kept
    // for `webhooks list` and logged must not carry a token from its query string.
    const masked = message.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, (url) => redactedUrl(url));
    return { ok: false, error: masked.slice(0, 300) };
  }
}

/**
 * Delivers the webhook outbox on the leased-outbox loop (src/outbox/leased-worker.ts: claims due
 * rows with a lease, so no two instances hold one row), posts each, records the outcome. A 2xx is success; anything else is tried again
 * with a doubling delay until the row's retry window (more than a day) ends, then it is failed.
 */
export function createWebhookWorker(options: {
  store: WebhookStore;
  secret: Buffer;
  holder: string;
  settings?: Partial<WebhookDeliverySettings>;
  now?: () => number;
  log: WebhookLog;
  events: WebhookEvents;
}): WebhookWorker {
  const { store, secret, holder, log, events } = options;
  const settings = { ...defaultWebhookDeliverySettings, ...options.settings };
  const now = options.now ?? (() => Date.now());

  async function deliver(delivery: WebhookDelivery): Promise<void> {
    const fields = { webhook: delivery.eventId, type: delivery.type, attempt: delivery.attempts };
    const result = await attempt(delivery, secret, now(), settings.attemptTimeoutMs);
    const at = now();
    if (result.ok) {
      await store.markSent(delivery.id, holder, at);
      events.webhookSent();
      return;
    }
    if (at >= delivery.retryUntil) {
      await store.markFailed(delivery.id, holder, result.error);
      events.webhookFailed();
      log.warn(
        { ...fields, endpoint: redactedUrl(delivery.endpoint), error: result.error },
        'webhook not delivered within its retry window: failed (`gatehouse webhooks retry ID` sends it again)',
      );
      return;
    }
    const delayMs = backoffMs(delivery.attempts, settings.retryBaseMs, settings.retryMaxMs);
    await store.markRetry(delivery.id, holder, at + delayMs, result.error);
    log.warn(
      {
        ...fields,
        endpoint: redactedUrl(delivery.endpoint),
        error: result.error,
        retryInSeconds: delayMs / 1000,
      },
      'webhook not delivered yet: will retry',
    );
  }

  return createLeasedWorker({
    noun: 'webhook',
    queue: store,
    holder,
    settings,
    now,
    log,
    room: () => settings.batch,
    deliver,
    describe: (delivery) => ({ webhook: delivery.eventId }),
  });
}
