import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { appendAuditEntry } from '../../audit/append.js';
import { databaseNow } from '../../db/clock.js';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { Database } from '../../db/schema.js';

/** The accounts spec's event types (those not yet written come with their features). */
export type AccountEventType =
  | 'signin'
  | 'signin_failed'
  | 'throttled'
  | 'signout'
  | 'session_revoked'
  | 'password_changed'
  | 'password_reset'
  | 'email_changed'
  | 'totp_enabled'
  | 'totp_disabled'
  | 'recovery_code_used'
  | 'passkey_added'
  | 'passkey_removed'
  | 'identity_linked'
  | 'identity_unlinked'
  | 'account_locked'
  // Not in the spec's list: wrong codes locked the second factor's step (model/factor-throttle.ts).
  | 'second_factor_locked'
  // Not in the spec's list: how an account came to be (an accepted invitation, open sign-up).
  | 'account_created'
  // Not in the spec's list of events but in its §3: an old app's session carried over.
  | 'session_migrated'
  // Not in the spec's list: personal access tokens (adoption spec §4).
  | 'access_token_created'
  | 'access_token_revoked'
  // Adoption spec §5: a sign-in from a device and a network the account had not signed in from.
  | 'signin_new_device';

export interface NewAccountEvent {
  userId: string;
  type: AccountEventType;
  /** The client's address, whole: the API truncates it when it shows it (ip-prefix.ts). */
  ip: string;
  /** The User-Agent, cut to `deviceMaxLength`. */
  device: string;
  detail?: Record<string, unknown>;
  /** Who did it when not the user (an operator's label): the audit log's `actor`. */
  actor?: string;
}

export interface AccountEvent {
  type: string;
  at: number;
  ip: string;
  device: string;
  /** What else was recorded (a refusal's `reason`, the way in's `method`), when anything. */
  detail?: Record<string, unknown>;
}

/** A stored `detail` column (JSON text), as an object; anything else as none. */
function detailOf(stored: string | null): Record<string, unknown> | undefined {
  if (stored === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(stored);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Events anyone who knows the address can cause, without a password: recorded at most once per
 * account, type and throttle window (src/account/event-sink.ts), and given a share of the list
 * of their own.
 */
export const refusalEventTypes: ReadonlySet<string> = new Set(['signin_failed', 'throttled']);

/** Longest User-Agent kept: enough to tell browsers apart, bounded against padding. */
export const deviceMaxLength = 256;
const ipMaxLength = 64;
/** How far back a user's own list reaches. */
export const eventsListDays = 90;
const listMax = 200;
/** Of the list, at most this many are refusals; the rest is what the owner's sessions did. */
const refusalsListMax = 50;

let lastIdMs = 0;
let sequence = 0;

/**
 * An id that sorts in the order this process made them (milliseconds, then a sequence within
 * one millisecond, then random bits against collisions between instances): events of the same
 * millisecond still list newest first.
 */
function orderedId(): string {
  const ms = Math.max(Date.now(), lastIdMs);
  sequence = ms === lastIdMs ? sequence + 1 : 0;
  lastIdMs = ms;
  const time = ms.toString(16).padStart(12, '0');
  const seq = sequence.toString(16).padStart(6, '0');
  return `${time}-${seq}-${randomBytes(8).toString('hex')}`;
}

/**
 * Writes one event: to the user's own record (their list, 90 days) and to the audit log (src/audit/),
 * in one transaction: `db`'s when it is one, so the event commits with its change, else its
 * own. The one way an event is written.
 */
export async function record(db: Kysely<Database>, event: NewAccountEvent): Promise<void> {
  if (db.isTransaction) await recordIn(db, event);
  else await db.transaction().execute((trx) => recordIn(trx, event));
  // Counted once written (inside a caller's transaction: once its statement has run).
  eventsRecorded(event.type);
}

let eventsRecorded: (type: AccountEventType) => void = () => undefined;

/**
 * Where recorded events are counted (the metrics' `gatehouse_account_events_total`): set once at
 * start-up by the service; the CLI and tests count nothing.
 */
export function countEventsWith(count: (type: AccountEventType) => void): void {
  eventsRecorded = count;
}

async function recordIn(trx: Kysely<Database>, event: NewAccountEvent): Promise<void> {
  const ip = event.ip.slice(0, ipMaxLength);
  const device = event.device.slice(0, deviceMaxLength);
  const detail = event.detail === undefined ? null : JSON.stringify(event.detail);
  // The audit entry first: its head row orders the appends, and its time is the event's.
  const { at } = await appendAuditEntry(trx, {
    type: event.type,
    userId: event.userId,
    actor: event.actor ?? null,
    ip,
    device,
    detail,
  });
  await trx
    .insertInto('account_events')
    .values({ id: orderedId(), user_id: event.userId, type: event.type, at, ip, device, detail })
    .execute();
}

/**
 * A user's events of the last 90 days, newest first (at most 200): up to 50 refusals (which a
 * stranger can cause) and the newest of the rest, so refusals never push out what the owner did.
 */
export async function listEvents(db: Kysely<Database>, userId: string): Promise<AccountEvent[]> {
  const since = sql<number>`${databaseNow(db)} - ${eventsListDays * 86_400_000}`;
  const refusals = [...refusalEventTypes];
  const query = (refusal: boolean, limit: number) =>
    db
      .selectFrom('account_events')
      .select(['id', 'type', 'at', 'ip', 'device', 'detail'])
      .where('user_id', '=', userId)
      .where('at', '>', since)
      .where('type', refusal ? 'in' : 'not in', refusals)
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  const [refused, rest] = await Promise.all([
    query(true, refusalsListMax),
    query(false, listMax - refusalsListMax),
  ]);
  const newestFirst = (a: { at: number | string; id: string }, b: typeof a) =>
    Number(b.at) - Number(a.at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  return [...refused, ...rest].sort(newestFirst).map(({ type, at, ip, device, detail }) => {
    const recorded = detailOf(detail);
    return { type, at: Number(at), ip, device, ...(recorded && { detail: recorded }) };
  });
}

/** Deletes events older than the list reaches (the audit log keeps its own, longer). */
export async function pruneEvents(db: Kysely<Database>, before: number): Promise<void> {
  await deleteInBatches(db, (limit) =>
    db
      .deleteFrom('account_events')
      .where('id', 'in', (eb) =>
        eb.selectFrom('account_events').select('id').where('at', '<', before).limit(limit),
      )
      .executeTakeFirst(),
  );
}
