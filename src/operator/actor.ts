import type { Kysely } from 'kysely';
import { record, type AccountEventType } from '../account/model/events.js';
import { appendAuditEntry } from '../audit/append.js';
import type { Database } from '../db/schema.js';

/**
 * Who asked for an operator operation: `gatehouse CLI`, or an admin token's label. Never a
 * secret: it is written to the user's events (their `device`, and `by` in the detail), which the
 * user reads at /api/account/events.
 */
export interface Actor {
  label: string;
}

/** The ports every operation needs: the database and the clock (ms). */
export interface OperatorPorts {
  db: Kysely<Database>;
  now: () => number;
}

/**
 * An operator's change to a user, in the user's record and in the caller's transaction, so it
 * commits with the change or not at all. No client address: the operator's shell or the admin
 * listener is no place the user signed in from.
 */
export function recordOperatorEvent(
  trx: Kysely<Database>,
  actor: Actor,
  userId: string,
  type: AccountEventType,
  detail: Record<string, unknown> = {},
): Promise<void> {
  return record(trx, {
    userId,
    type,
    ip: '',
    device: actor.label,
    // `by` last: a detail cannot pass for another actor.
    detail: { ...detail, by: actor.label },
    actor: actor.label,
  });
}

/** An operator's action the user's own record does not list, kept in the audit log only. */
export type OperatorActionType =
  | 'user_created'
  | 'users_imported'
  | 'user_invited'
  | 'user_enabled'
  | 'user_renamed'
  | 'email_verified'
  | 'email_unlocked'
  | 'user_removed'
  | 'enrolment_code_issued';

/**
 * Appends an operator's action to the audit log with its actor, in `db`'s transaction when it
 * is one. `userId` null: the action is about no user (an address's throttle, an invitation).
 */
export async function auditOperatorAction(
  db: Kysely<Database>,
  actor: Actor,
  type: OperatorActionType,
  userId: string | null,
  detail: Record<string, unknown> = {},
): Promise<void> {
  await appendAuditEntry(db, {
    type,
    userId,
    actor: actor.label,
    ip: '',
    device: actor.label,
    detail: JSON.stringify({ ...detail, by: actor.label }),
  });
}
