import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Throttle } from '../auth/signin/throttle.js';
import type { Database } from '../db/schema.js';
import { HttpError } from '../http/errors.js';
import type { OutboxQueue } from '../mail/outbox-queue.js';
import type { OutboxStore } from '../mail/mail-outbox-store.js';
import type { Observer } from '../observe/observer.js';
import type { Actor } from '../operator/operations.js';
import { importedIdPattern } from '../operator/import/import-line.js';
import type { FirebaseScryptParams } from '../users/legacy-hashes.cjs';
import type { WebhookStore } from '../webhooks/webhook-outbox-store.js';

/** What the admin routes hand the operator operations (src/operator/). */
export interface AdminPorts {
  db: Kysely<Database>;
  now: () => number;
  throttle: Throttle;
  observer: Pick<Observer, 'sessionsRevoked'>;
  /** The mail queue (invitations); undefined: mail is off. */
  mail: OutboxQueue | undefined;
  mailStore: OutboxStore;
  webhooks: WebhookStore;
  /** The public origin invitation links are built on (AUTH_URL); undefined: not set. */
  origin: string | undefined;
  /** ACCOUNT_PAGES_PATH: where the invitation link leads on that origin. */
  accountPagesPath?: string | undefined;
  inviteTtlSeconds: number;
  /** AUDIT_RETENTION_DAYS: how old the audit checkpoint's last entry must be at least. */
  auditRetentionDays: number;
  /** SESSION_MAX_AGE and SESSION_ABSOLUTE_MAX_AGE: the sessions a user's list still shows. */
  sessionLifetime: { maxAgeSeconds: number; absoluteMaxAgeSeconds: number };
  /** An identity provider's configured name, by id (the owner's notice of a removal). */
  providerName?: ((id: string) => string) | undefined;
  /** A configured provider's issuer, by id, or null (an import's identities). */
  issuerOf?: ((id: string) => string | null) | undefined;
  /** IMPORT_FIREBASE_SCRYPT, for imported Firebase hashes. */
  firebaseScrypt?: FirebaseScryptParams | null | undefined;
}

/** One call as a route sees it: the path's and query's values, the JSON body, who asks. */
export interface AdminCall {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: Record<string, unknown>;
  /** A streamed body (JSON Lines, an import), read as it arrives; else undefined. */
  stream?: Readable | undefined;
  actor: Actor;
  ports: AdminPorts;
}

/** A route's answer: its status and JSON body (none for 204). */
export interface AdminAnswer {
  status: number;
  body?: unknown;
}

export type AdminHandler = (call: AdminCall) => Promise<AdminAnswer>;

export const ok = (body: unknown, status = 200): AdminAnswer => ({ status, body });

/** 404 naming what was not found. */
export const notFound = (what: string) => new HttpError('not_found', {}, `No such ${what}.`);

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ids are UUIDs, in any case, or an imported user's kept id (src/operator/import/import-line.ts),
 * as it is: anything else names nothing (and is not looked up).
 */
export function idParam(call: AdminCall, what: string): string {
  const id = call.params.id ?? '';
  if (uuid.test(id)) return id.toLowerCase();
  if (!importedIdPattern.test(id)) throw notFound(what);
  return id;
}

/** `limit` from the query: 1-`max`, `fallback` when absent; else 422 naming it. */
export function limitParam(call: AdminCall, fallback: number, max: number): number {
  const raw = call.query.limit;
  if (raw === undefined || raw === '') return fallback;
  const limit = Number(raw);
  if (!/^[0-9]{1,6}$/.test(raw) || limit < 1 || limit > max)
    throw new HttpError('invalid_field', {}, `limit must be a whole number from 1 to ${max}.`, {
      field: 'limit',
    });
  return limit;
}
