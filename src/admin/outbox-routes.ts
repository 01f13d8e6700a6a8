import { HttpError, invalidField } from '../http/errors.js';
import { outboxStates, type OutboxMail, type OutboxState } from '../mail/mail-outbox-store.js';
import { listMail, listWebhooks, retryMail, retryWebhook } from '../operator/operations.js';
import {
  webhookStates,
  type WebhookDelivery,
  type WebhookState,
} from '../webhooks/webhook-outbox-store.js';
import { idParam, limitParam, notFound, ok } from './admin-call.js';
import type { AdminCall, AdminHandler } from './admin-call.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function stateParam<T extends string>(call: AdminCall, states: readonly T[]): T | undefined {
  const state = call.query.state;
  if (state === undefined || state === '') return undefined;
  if (!states.includes(state as T))
    throw invalidField('state', `state must be one of ${states.join(', ')}.`);
  return state as T;
}

/** A mail as the outbox lists it: never its body (a link or code may be in it). */
function mailView(mail: OutboxMail) {
  return {
    id: mail.id,
    kind: mail.kind,
    to: mail.recipient,
    subject: mail.subject,
    state: mail.state,
    attempts: mail.attempts,
    lastError: mail.lastError,
    createdAt: iso(mail.createdAt),
    // While it waits: for a mail being sent it is the lease's end, and past for the rest.
    nextAttemptAt: mail.state === 'queued' ? iso(mail.nextAttemptAt) : null,
    sentAt: iso(mail.sentAt),
  };
}

function webhookView(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    type: delivery.type,
    endpoint: delivery.endpoint,
    state: delivery.state,
    attempts: delivery.attempts,
    lastError: delivery.lastError,
    createdAt: iso(delivery.createdAt),
    nextAttemptAt: delivery.state === 'queued' ? iso(delivery.nextAttemptAt) : null,
    sentAt: iso(delivery.sentAt),
  };
}

export const mailList: AdminHandler = async (call) => {
  const state = stateParam<OutboxState>(call, outboxStates);
  const mails = await listMail(
    { mail: call.ports.mailStore },
    { limit: limitParam(call, 50, 1000), ...(state !== undefined && { state }) },
  );
  return ok({ mail: mails.map(mailView) });
};

export const mailRetry: AdminHandler = async (call) => {
  const id = idParam(call, 'mail');
  const result = await retryMail(
    { now: call.ports.now, mail: call.ports.mailStore },
    { id, actor: call.actor },
  );
  if (result === 'missing') throw notFound('mail');
  if (result === 'not-failed')
    throw new HttpError('conflict', {}, 'Only a failed or held mail can be retried.');
  if (result === 'erased')
    throw new HttpError(
      'conflict',
      {},
      'The mail body was erased (its link expired): it cannot be retried.',
    );
  return ok({ id, state: 'queued' });
};

export const webhookList: AdminHandler = async (call) => {
  const state = stateParam<WebhookState>(call, webhookStates);
  const deliveries = await listWebhooks(
    { webhooks: call.ports.webhooks },
    { limit: limitParam(call, 50, 1000), ...(state !== undefined && { state }) },
  );
  return ok({ webhooks: deliveries.map(webhookView) });
};

export const webhookRetry: AdminHandler = async (call) => {
  const id = idParam(call, 'webhook delivery');
  const result = await retryWebhook(
    { now: call.ports.now, webhooks: call.ports.webhooks },
    { id, actor: call.actor },
  );
  if (result === 'missing') throw notFound('webhook delivery');
  if (result === 'not-failed')
    throw new HttpError('conflict', {}, 'Only a failed delivery can be retried.');
  return ok({ id, state: 'queued' });
};
