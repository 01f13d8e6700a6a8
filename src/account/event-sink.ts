import type { Kysely } from 'kysely';
import type { AccountEventSink } from '../auth/account-events.js';
import type { Database } from '../db/schema.js';
import type { UserStore } from '../users/store.js';
import { record } from './model/events.js';

export interface EventSinkDeps {
  db: Kysely<Database>;
  users: Pick<UserStore, 'findByEmail'>;
  log: { error(fields: object, message: string): void };
}

/**
 * Sign-in's and sign-out's events, written after their answers (src/auth/authjs-bridge.ts):
 * an address without an account leaves no trace, and a failure to write is logged, never
 * answered (the sign-in already was).
 */
export function createEventSink(deps: EventSinkDeps): AccountEventSink {
  const write = async (
    event: Parameters<AccountEventSink['note']>[0],
    client: { ip: string; device: string },
  ) => {
    const userId =
      event.userId ??
      (event.email === undefined ? undefined : (await deps.users.findByEmail(event.email))?.id);
    if (userId === undefined) return;
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
