import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AccountEventSink, PendingAccountEvent } from '../auth/request/account-events.js';
import type { ThrottleStore } from '../auth/signin/throttle-store.js';
import type { Database } from '../db/schema.js';
import type { UserStore } from '../users/store.js';
import { record, refusalEventTypes } from './model/events.js';
import type { SignInRecord } from './new-device/sign-in-record.js';

export interface EventSinkDeps {
  db: Kysely<Database>;
  users: Pick<UserStore, 'findByEmail'>;
  /** The throttle's counters: one per account and refusal type marks its window as recorded. */
  throttleStore: ThrottleStore;
  /** THROTTLE_WINDOW_SECONDS: at most one refusal of each type is recorded per account in it. */
  refusalWindowSeconds: number;
  /** A browser's sign-in with its device: recorded with the device (src/account/new-device/). */
  signIns?: SignInRecord;
  now: () => number;
  log: { error(fields: object, message: string): void };
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/**
 * Sign-in's and sign-out's events, written after their answers (src/auth/bridge/authjs-bridge.ts):
 * an address without an account leaves no trace, and a failure to write is logged, never
 * answered (the sign-in already was).
 *
 * A refusal (`signin_failed`, `throttled`) needs no password: anyone who knows the address can
 * cause one. So at most one of each type is recorded per account and throttle window (the
 * first; the rest of the window's are the same story), which bounds what a stranger can write
 * to the account's record, and its list keeps a share for them apart from what the owner did
 * (model/events.ts), so a flood never pushes the owner's own sign-ins out of sight.
 */
export function createEventSink(deps: EventSinkDeps): AccountEventSink {
  const windowMs = deps.refusalWindowSeconds * 1000;
  const once = { maxFailures: 1, windowMs, lockMs: windowMs };
  const firstInWindow = async (type: PendingAccountEvent['type'], userId: string) =>
    (await deps.throttleStore.charge(`event-${type}:${digest(userId)}`, once, deps.now()))
      .failures === 1;
  const write = async (event: PendingAccountEvent, client: { ip: string; device: string }) => {
    const userId =
      event.userId ??
      (event.email === undefined ? undefined : (await deps.users.findByEmail(event.email))?.id);
    if (userId === undefined) return;
    if (refusalEventTypes.has(event.type) && !(await firstInWindow(event.type, userId))) return;
    const device = event.type === 'signin' ? event.device : undefined;
    if (device !== undefined && deps.signIns !== undefined) {
      await deps.signIns({ userId, device, ...(event.detail && { detail: event.detail }) }, client);
      return;
    }
    await record(deps.db, {
      userId,
      type: event.type,
      ip: client.ip,
      device: client.device,
      ...(event.detail !== undefined && { detail: event.detail }),
    });
  };
  return {
    note(event, client) {
      write(event, client).catch((error: unknown) => {
        deps.log.error({ err: error, event: event.type }, 'could not record an account event');
      });
    },
  };
}
