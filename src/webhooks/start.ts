import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import {
  createWebhookWorker,
  type WebhookEvents,
  type WebhookLog,
  type WebhookWorker,
} from './webhook-worker.js';
import { sendWebhooksTo } from './emit.js';
import { createWebhookStore, type WebhookStore } from './webhook-outbox-store.js';
import { secretBytes } from './sign.js';

/** What webhooks need from the configuration (src/config/webhooks.ts). */
export interface WebhookSettings {
  endpoints: readonly string[];
  /** `whsec_<base64>`. */
  secret: string;
  retryBaseSeconds: number;
}

export interface Webhooks {
  store: WebhookStore;
  /** Undefined when webhooks are off: nothing is written, nothing delivered. */
  worker: WebhookWorker | undefined;
}

/**
 * Turns emission on for this process (src/webhooks/emit.ts) when endpoints are configured, and
 * makes the worker over `db` (not started: the service starts it once it listens; the CLI
 * never does, it only writes and reads).
 */
export function createWebhooks(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  settings: WebhookSettings | undefined,
  hooks: { log: WebhookLog; events: WebhookEvents },
): Webhooks {
  sendWebhooksTo(settings?.endpoints ?? []);
  const store = createWebhookStore(db, dialect);
  if (settings === undefined) return { store, worker: undefined };
  const worker = createWebhookWorker({
    store,
    secret: secretBytes(settings.secret),
    holder: `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    settings: { retryBaseMs: settings.retryBaseSeconds * 1000 },
    log: hooks.log,
    events: hooks.events,
  });
  return { store, worker };
}
