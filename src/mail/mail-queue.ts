import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export type MailKind =
  | 'password-reset'
  | 'email-verification'
  | 'email-change'
  | 'email-changed-notice'
  | 'password-changed-notice'
  | 'account-exists'
  | 'signup-confirmation'
  | 'invitation'
  | 'account-locked-notice'
  | 'second-factor-notice'
  | 'passkey-added-notice'
  | 'passkey-removed-notice'
  | 'signin-enrolment-code'
  | 'test';

export interface MailRequest {
  kind: MailKind;
  to: string; // already normalised address
  values: Record<string, string>; // what the template reads, e.g. name, link, code, lockLink, expiresInMinutes
  /** When the secret in it stops mattering: its body is erased then (and never sent after). */
  expiresAt?: Date;
}

export interface MailQueue {
  /** Writes the mail into the outbox using `db`, which may be the caller's open transaction. */
  enqueue(db: Kysely<Database>, mail: MailRequest): Promise<void>;
  /** false in production without SMTP_URL: the mail flows are off (their routes answer 404). */
  readonly enabled: boolean;
}
