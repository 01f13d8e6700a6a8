import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, UsersTable } from '../db/schema.js';
import type { WebhookData, WebhookType } from './types.js';

/*
 * The one place a change becomes a webhook: every writer of users and sessions calls `emit…`
 * in the transaction of its change, so a webhook commits with its change or not at all (the
 * outbox idea, as mail's). The endpoints are fixed once at start-up (`sendWebhooksTo`, from
 * WEBHOOK_URL, by the service and the CLI alike): with none, every emit returns at once and
 * writes nothing, so sign-in pays nothing when webhooks are off. Kept process-wide rather than
 * passed down because the writers sit below every flow (users/writes.ts, sessions/), and a
 * flow that forgot to pass it on would drop events without a word.
 */
let endpoints: readonly string[] = [];

/** At start-up, from WEBHOOK_URL; an empty list (the default) turns webhooks off. */
export function sendWebhooksTo(urls: readonly string[]): void {
  endpoints = Object.freeze([...urls]);
}

export function webhooksOn(): boolean {
  return endpoints.length > 0;
}

/** How long an event is retried before it is marked failed: more than a day (the spec's floor). */
export const webhookRetryWindowMs = 25 * 3600 * 1000;

/** `db` as a transaction: the caller's, or a new one around `work` when webhooks are on. */
export function withWebhooks<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return db.isTransaction || !webhooksOn() ? work(db) : db.transaction().execute(work);
}

/** The user part of `data`, from a users row. */
export function userData(
  row: Pick<UsersTable, 'id' | 'email' | 'name' | 'email_verified_at'> & { disabled: unknown },
): WebhookData {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    emailVerified: row.email_verified_at !== null,
    disabled: Number(row.disabled) === 1,
  };
}

/**
 * One outbox row per endpoint for the event, on `trx` (the change's transaction), all with
 * one `webhook-id`. The body is fixed now, so every attempt signs the same bytes.
 */
export async function emitWebhook(
  trx: Kysely<Database>,
  type: WebhookType,
  data: WebhookData,
  at: number,
): Promise<void> {
  if (endpoints.length === 0) return;
  const eventId = `msg_${randomUUID().replaceAll('-', '')}`;
  const payload = JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
  await trx
    .insertInto('webhook_outbox')
    .values(
      endpoints.map((endpoint) => ({
        id: randomUUID(),
        event_id: eventId,
        endpoint,
        type,
        payload,
        state: 'queued' as const,
        next_attempt_at: at,
        retry_until: at + webhookRetryWindowMs,
        lease_holder: null,
        lease_until: null,
        last_error: null,
        created_at: at,
        sent_at: null,
      })),
    )
    .execute();
}

/** As `emitWebhook`, the user read on `trx` as the change left it; nothing when it is gone. */
export async function emitUserWebhook(
  trx: Kysely<Database>,
  type: WebhookType,
  userId: string,
  at: number,
  extra: Pick<
    WebhookData,
    'session' | 'sessions' | 'factor' | 'passkey' | 'replaced' | 'identity'
  > = {},
): Promise<void> {
  if (endpoints.length === 0) return;
  const row = await trx
    .selectFrom('users')
    .select(['id', 'email', 'name', 'email_verified_at', 'disabled'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (row === undefined) return;
  await emitWebhook(trx, type, { ...userData(row), ...extra }, at);
}
