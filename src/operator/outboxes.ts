import { retryWindowMs } from '../mail/outbox-queue.js';
import type {
  OutboxMail,
  OutboxState,
  OutboxStore,
  RetryResult,
} from '../mail/mail-outbox-store.js';
import { webhookRetryWindowMs } from '../webhooks/emit.js';
import type {
  WebhookDelivery,
  WebhookRetryResult,
  WebhookState,
  WebhookStore,
} from '../webhooks/webhook-outbox-store.js';
import type { Actor, OperatorPorts } from './actor.js';

/*
 * The two outboxes as the operator reads and retries them: `gatehouse mail|webhooks list|retry`
 * and the admin API's /mail and /webhooks. A retry is due at once with a new retry window.
 */

export function listMail(
  ports: { mail: Pick<OutboxStore, 'list'> },
  request: { state?: OutboxState; limit: number },
): Promise<OutboxMail[]> {
  return ports.mail.list(request);
}

export function retryMail(
  ports: Pick<OperatorPorts, 'now'> & { mail: Pick<OutboxStore, 'retry'> },
  request: { id: string; actor: Actor },
): Promise<RetryResult> {
  return ports.mail.retry(request.id, ports.now(), retryWindowMs);
}

export function listWebhooks(
  ports: { webhooks: Pick<WebhookStore, 'list'> },
  request: { state?: WebhookState; limit: number },
): Promise<WebhookDelivery[]> {
  return ports.webhooks.list(request);
}

export function retryWebhook(
  ports: Pick<OperatorPorts, 'now'> & { webhooks: Pick<WebhookStore, 'retry'> },
  request: { id: string; actor: Actor },
): Promise<WebhookRetryResult> {
  return ports.webhooks.retry(request.id, ports.now(), webhookRetryWindowMs);
}
