import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailKind, MailQueue } from '../../mail/mail-queue.js';
import { writeCredentialChange } from '../../users/writes.js';
import { emitUserWebhook } from '../../webhooks/emit.js';
import { record, type AccountEventType, type NewAccountEvent } from './events.js';
import type { PagePaths } from '../paths.js';
import { queueSecurityNotice } from './security-notice.js';

/** The client a change came from, as the account's record keeps it. */
export type EventClient = Omit<NewAccountEvent, 'userId' | 'type' | 'detail'>;

/** The account as it is after a credential change. */
export interface ChangedAccount {
  email: string;
  name: string;
  credentialVersion: number;
  /** Sessions this change ended (the one kept, if any, is not counted). */
  endedSessions: number;
}

export interface CredentialChange {
  userId: string;
  at: number;
  /**
   * The state the change was decided on: it applies only while the account still has it (a
   * secret's credential version, the hash a password was checked against), so a concurrent
   * change wins and this one answers null.
   */
  expect?: { credentialVersion?: number; passwordHash?: string; enabled?: true };
  /** What changes besides the credential version. */
  set: {
    passwordHash?: string;
    /** A new address; it counts as verified from `at` (the change was proven from it). */
    email?: string;
    /** The address was proven (a mailed secret came back): verified from now if not before. */
    emailProven?: true;
    disabled?: true;
  };
  /** The session that goes on (the one making the change); every other session ends. */
  keepSessionId?: string | null;
  /** The account's record of the change; `endedSessions` joins its detail. */
  event: { type: AccountEventType; client: EventClient; detail?: Record<string, unknown> };
  /**
   * The security notice with its "this wasn't me" link, queued in the same transaction; `to` is
   * the address after the change unless given (an address change tells the old one).
   */
  notice?:
    | {
        mail: MailQueue;
        kind: MailKind;
        origin: string;
        /** Where the pages live on it: the lock link goes to `pages.lock`. */
        pages: PagePaths;
        to?: string;
        values?: Record<string, string>;
      }
    | undefined;
}

/**
 * The account's one credential change, in the caller's transaction: the user's row updated (only
 * over the expected state), the credential version moved on (so every e-mailed secret issued
 * before and every sign-in that verified the old credential is void), every session ended but
 * the one kept, the event recorded and the notice queued. Password change, reset, address change
 * and the lock all go through here. Null when the account no longer has the expected state (or
 * is gone): nothing changed.
 */
export async function changeCredential(
  trx: Kysely<Database>,
  change: CredentialChange,
): Promise<ChangedAccount | null> {
  const { userId, at, set } = change;
  const written = await writeCredentialChange(trx, {
    id: userId,
    at,
    set: {
      ...(set.passwordHash !== undefined && { passwordHash: set.passwordHash }),
      ...(set.email !== undefined && { email: { address: set.email, verified: 'now' } }),
      ...(set.emailProven === true && { emailProven: true }),
      ...(set.disabled === true && { disabled: true }),
    },
    ...(change.expect !== undefined && { expect: change.expect }),
    keepSessionId: change.keepSessionId ?? null,
  });
  if (written === null) return null;
  const ended = written.endedSessions;
  const updated = written.user;
  // The lock's own word beside the user.disabled the write sent (src/webhooks/).
  if (change.event.type === 'account_locked')
    await emitUserWebhook(trx, 'account.locked', userId, at);
  await record(trx, {
    ...change.event.client,
    userId,
    type: change.event.type,
    detail: { ...change.event.detail, endedSessions: ended },
  });
  const account = {
    email: updated.email,
    name: updated.name,
    credentialVersion: updated.credentialVersion,
    endedSessions: ended,
  };
  const { notice } = change;
  if (notice !== undefined)
    await queueSecurityNotice(trx, notice.mail, {
      kind: notice.kind,
      account: {
        id: userId,
        email: notice.to ?? account.email,
        ...(notice.to !== undefined && notice.to !== account.email && { movedTo: account.email }),
        name: account.name,
        credentialVersion: account.credentialVersion,
      },
      origin: notice.origin,
      pages: notice.pages,
      now: at,
      ...(notice.values !== undefined && { values: notice.values }),
    });
  return account;
}
