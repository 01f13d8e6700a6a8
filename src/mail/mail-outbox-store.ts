import type { Kysely, Selectable } from 'kysely';
import type { Database, MailOutboxTable } from '../db/schema.js';
import { createLeasedStore, leasedRecord, type LeasedRecord } from '../outbox/leased-store.js';

export type OutboxState = MailOutboxTable['state'];
export const outboxStates: readonly OutboxState[] = ['held', 'queued', 'sending', 'sent', 'failed'];

/** A mail's record as `mail list` and `mail show` read it; bodies are null once erased. */
export interface OutboxMail extends LeasedRecord<OutboxState> {
  kind: string;
  recipient: string;
  subject: string;
  bodyText: string | null;
  bodyHtml: string | null;
  expiresAt: number | null;
}

/** A mail a worker holds the lease on, ready to send. */
export type ClaimedMail = Pick<
  OutboxMail,
  | 'id'
  | 'kind'
  | 'recipient'
  | 'subject'
  | 'bodyText'
  | 'bodyHtml'
  | 'attempts'
  | 'retryUntil'
  | 'expiresAt'
>;

export type RetryResult = 'queued' | 'missing' | 'not-failed' | 'erased';

/** How long metadata of a finished mail stays for `mail list` (bodies go much sooner). */
export const finishedKeptMs = 30 * 24 * 3600 * 1000;
/** A failed or held mail without an expiry (no secret in it) keeps its body this long, for `mail retry`/`show`. */
export const unexpiringBodyKeptMs = 7 * 24 * 3600 * 1000;

const erased = { body_text: null, body_html: null } as const;

function fromRow(row: Selectable<MailOutboxTable>): OutboxMail {
  const { kind, recipient, subject } = row;
  return {
    ...leasedRecord(row),
    kind,
    recipient,
    subject,
    bodyText: row.body_text,
    bodyHtml: row.body_html,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

/**
 * The mail outbox: the leased-outbox statements (src/outbox/leased-store.ts) on `mail_outbox`,
 * and what is the mail's own: held mail (queued where SMTP_URL was unset, e.g. by the CLI from a
 * shell without it: the instance that has SMTP sends them), security mail claimed first
 * (src/mail/priority.ts), and bodies erased once their secret no longer matters.
 */
export function createOutboxStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
  const leased = createLeasedStore(db, dialect, {
    name: 'mail_outbox',
    claimable: ['held', 'queued', 'sending'],
    // The partial (priority, next_attempt_at) index of migration 008.
    claimOrder: ['priority', 'next_attempt_at'],
    erasable: ['body_text', 'body_html'],
    fromRow,
  });

  return {
    /** Writes a new mail on `into` (the caller's transaction, or the database). */
    async insert(into: Kysely<Database>, mail: Omit<MailOutboxTable, 'attempts'>): Promise<void> {
      await into.insertInto('mail_outbox').values(mail).execute();
    },

    /**
     * Takes the lease on up to `limit` due mails: queued ones whose next attempt has come, held
     * ones, and ones being sent whose lease ran out (their instance stopped or crashed).
     * Security mail first, then the longest due.
     */
    claimDue(now: number, holder: string, leaseMs: number, limit: number): Promise<ClaimedMail[]> {
      return leased.claimDue(now, holder, leaseMs, limit);
    },

    /**
     * Sent, bodies erased: recorded even when its lease ran out meanwhile (the server took it,
     * so it must not be sent again).
     */
    async markSent(id: string, now: number): Promise<void> {
      await leased.markSent(id, now, 'always');
    },

    /** Back to the queue for `nextAttemptAt`, while this holder still has the lease. */
    markRetry: leased.markRetry,

    /**
     * Failed for good. The body goes now if its secret no longer matters (expired, or
     * `keepBody` false); otherwise it stays for `mail retry` until `sweep` erases it.
     */
    async markFailed(id: string, error: string, keepBody: boolean): Promise<void> {
      await leased.markFailed(id, error, 'while-sending', !keepBody);
    },

    /** Extends the lease of a mail this holder is still sending (its attempt may yet succeed). */
    renewLease: leased.renewLease,

    /**
     * A stopping worker gives back the mails it holds but never started: due at once. Those in
     * `keep` (attempts it cut off) keep their lease until it runs out.
     */
    release: leased.release,

    /**
     * Erases bodies whose secret no longer matters, fails queued mails that expired unsent, and
     * forgets finished mails after `finishedKeptMs`.
     */
    sweep: (now: number): Promise<void> => sweep(db, leased, now),

    list(options: { state?: OutboxState; limit: number }): Promise<OutboxMail[]> {
      return leased.list(options);
    },

    get(id: string): Promise<OutboxMail | null> {
      return leased.get(id);
    },

    /** A failed or held mail back in the queue, due now, with a new retry window. */
    retry(id: string, now: number, retryWindowMs: number): Promise<RetryResult> {
      return leased.retry(id, now, retryWindowMs, ['failed', 'held']);
    },

    /** Queued and being sent, the age of the oldest, and held: what the gauges show. */
    async backlog(
      now: number,
    ): Promise<{ queued: number; oldestAgeSeconds: number; held: number }> {
      const { queued, oldestAgeSeconds } = await leased.backlog(now);
      return { held: await leased.count('held'), queued, oldestAgeSeconds };
    },
  };
}

export type OutboxStore = ReturnType<typeof createOutboxStore>;

async function sweep(
  db: Kysely<Database>,
  leased: Pick<ReturnType<typeof createLeasedStore>, 'forget'>,
  now: number,
): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ ...erased, state: 'failed', last_error: 'expired before it could be sent' })
    .where('state', '=', 'queued')
    .where('expires_at', '<=', now)
    .execute();
  await db
    .updateTable('mail_outbox')
    .set(erased)
    .where('state', 'in', ['held', 'failed'])
    .where('body_text', 'is not', null)
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb.and([eb('expires_at', 'is', null), eb('created_at', '<=', now - unexpiringBodyKeptMs)]),
      ]),
    )
    .execute();
  await leased.forget(['held', 'sent', 'failed'], now - finishedKeptMs);
}
