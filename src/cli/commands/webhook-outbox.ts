import { listWebhooks, retryWebhook } from '../../operator/operations.js';
import {
  createWebhookStore,
  webhookStates,
  type WebhookState,
} from '../../webhooks/webhook-outbox-store.js';
import { cliActor, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';
import { iso, printRows, readListOptions, requireRowId } from './outbox-rows.js';

export const listHelp = `Usage: gatehouse webhooks list [--state queued|sending|sent|failed] [--limit N] [--json]

Lists webhook deliveries, newest first (50 unless --limit says otherwise): id, state, type,
endpoint, created, attempts and the last error. One event sent to two endpoints is two
deliveries with one event id (the webhook-id header).`;

export const retryHelp = `Usage: gatehouse webhooks retry ID

Puts a failed delivery back in the queue, due now, with a new day of retries. Its webhook-id
stays the same, so a receiver that had it already recognises it.`;

export async function list(
  context: CliContext,
  values: { state?: string; limit?: string; json?: boolean },
) {
  const options = readListOptions<WebhookState>(values, webhookStates);
  const webhooks = createWebhookStore(context.db, context.dialect);
  printRows(context, await listWebhooks({ webhooks }, options), {
    json: values.json === true,
    asJson: (d) => ({
      id: d.id,
      eventId: d.eventId,
      state: d.state,
      type: d.type,
      endpoint: d.endpoint,
      attempts: d.attempts,
      createdAt: iso(d.createdAt),
      sentAt: d.sentAt === null ? null : iso(d.sentAt),
      lastError: d.lastError,
    }),
    describe: (d) => [d.type, d.endpoint],
    empty:
      options.state === undefined
        ? 'no webhook deliveries'
        : `no ${options.state} webhook deliveries`,
  });
}

export async function retry(context: CliContext, values: { id?: string }) {
  const id = requireRowId(values.id, { short: 'delivery', long: 'webhook delivery' });
  const result = await retryWebhook(
    { now: () => Date.now(), webhooks: createWebhookStore(context.db, context.dialect) },
    { id, actor: cliActor },
  );
  if (result === 'missing') throw new CliError(`no webhook delivery with id ${id}`, 1);
  if (result === 'not-failed')
    throw new CliError(`webhook delivery ${id} is not failed: only a failed one is retried`, 1);
  context.out(`queued ${id} again: the service sends it within seconds`);
}
