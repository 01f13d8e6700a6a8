import { listWebhooks, retryWebhook } from '../../operator/operations.js';
import {
  createWebhookStore,
  webhookStates,
  type WebhookState,
} from '../../webhooks/webhook-outbox-store.js';
import { cliActor, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';
import { printable } from './list.js';

export const listHelp = `Usage: gatehouse webhooks list [--state queued|sending|sent|failed] [--limit N] [--json]

Lists webhook deliveries, newest first (50 unless --limit says otherwise): id, state, type,
endpoint, created, attempts and the last error. One event sent to two endpoints is two
deliveries with one event id (the webhook-id header).`;

export const retryHelp = `Usage: gatehouse webhooks retry ID

Puts a failed delivery back in the queue, due now, with a new day of retries. Its webhook-id
stays the same, so a receiver that had it already recognises it.`;

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

export async function list(
  context: CliContext,
  values: { state?: string; limit?: string; json?: boolean },
) {
  const state = values.state;
  if (state !== undefined && !webhookStates.includes(state as WebhookState))
    throw new CliError(`--state must be one of ${webhookStates.join(', ')}`, 2);
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new CliError('--limit must be a whole number from 1 to 10000', 2);
  const deliveries = await listWebhooks(
    { webhooks: createWebhookStore(context.db, context.dialect) },
    { limit, ...(state !== undefined && { state: state as WebhookState }) },
  );
  if (values.json === true) {
    const rows = deliveries.map((d) => ({
      id: d.id,
      eventId: d.eventId,
      state: d.state,
      type: d.type,
      endpoint: d.endpoint,
      attempts: d.attempts,
      createdAt: iso(d.createdAt),
      sentAt: d.sentAt === null ? null : iso(d.sentAt),
      lastError: d.lastError,
    }));
    context.out(JSON.stringify(rows, null, 2));
    return;
  }
  if (deliveries.length === 0) {
    context.out(state === undefined ? 'no webhook deliveries' : `no ${state} webhook deliveries`);
    return;
  }
  for (const d of deliveries) {
    const error = d.lastError === null ? '' : `\t${printable(d.lastError)}`;
    context.out(
      `${d.id}\t${d.state}\t${d.type}\t${printable(d.endpoint)}\t${iso(d.createdAt)}\t${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${error}`,
    );
  }
}

export async function retry(context: CliContext, values: { id?: string }) {
  const raw = values.id;
  if (raw === undefined || raw === '') throw new CliError('the delivery id is required', 2);
  // Ids are UUIDs: anything else names no delivery, and is not echoed.
  if (!/^[0-9a-f-]{36}$/i.test(raw)) throw new CliError('no webhook delivery has that id', 1);
  const id = raw.toLowerCase();
  const result = await retryWebhook(
    { now: () => Date.now(), webhooks: createWebhookStore(context.db, context.dialect) },
    { id, actor: cliActor },
  );
  if (result === 'missing') throw new CliError(`no webhook delivery with id ${id}`, 1);
  if (result === 'not-failed')
    throw new CliError(`webhook delivery ${id} is not failed: only a failed one is retried`, 1);
  context.out(`queued ${id} again: the service sends it within seconds`);
}
