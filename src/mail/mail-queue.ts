import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * A kind of mail, by name: the account's flows and each way in declare theirs with their words
 * (`MailCatalogue`), and a kind nobody registered is refused when it is queued.
 */
export type MailKind = string;

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
