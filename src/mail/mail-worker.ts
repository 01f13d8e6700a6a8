import {
  backoffMs,
  createLeasedWorker,
  type LeasedWorker,
  type LeasedWorkerLog,
} from '../outbox/leased-worker.js';
import type { ClaimedMail, OutboxStore } from './mail-outbox-store.js';
import { smtpConnections, type MailTransport, type SendResult } from './smtp-transport.js';

export interface DeliverySettings {
  /** Between polls while nothing is due: one indexed query each time. */
  idlePollMs: number;
  /** The first retry's delay; each further one doubles, up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * How long a mail's lease lasts past its last renewal; past it another instance may take the
   * mail. Renewed every third of it while the attempt is in flight, however long the SMTP
   * server takes: a second attempt never starts while the first may still be accepted.
   */
  leaseMs: number;
  /**
   * Mails claimed by one poll, sent side by side: as many as the transport has connections, so
   * none waits in nodemailer's queue, where its deadline would run out while it might still go
   * out later (and then again on retry).
   */
  batch: number;
  /** How often bodies past use are erased and old rows forgotten. */
  sweepIntervalMs: number;
  /**
   * How long `stop` waits for sends in flight. Past it their leases are left to run out (not
   * given back): the server may have the message already, so no other instance sends it again
   * at once.
   */
  drainMs: number;
  /**
   * How long a poll waits for one attempt before it goes on without it. The attempt is not
   * abandoned: its outcome is recorded when the server answers (it keeps its lease till then).
   * Giving up on it and retrying could send the mail twice, were the first attempt to succeed.
   */
  attemptWaitMs: number;
  /**
   * At most `count` attempts start in any `windowMs` (MAIL_RATE_PER_MINUTE, per process): a
   * burst of sign-ups cannot push a relay past the rate it accepts from us. While the cap is
   * reached due mail waits, and the next one taken is the most urgent (mail-outbox-store.ts).
   */
  rateLimit: { count: number; windowMs: number };
}

export const defaultDeliverySettings: DeliverySettings = {
  idlePollMs: 2_000,
  retryBaseMs: 30_000,
  retryMaxMs: 15 * 60_000,
  // Renewed while the send is in flight; what it bounds is how long a crashed instance's mail waits.
  leaseMs: 2 * 60_000,
  batch: smtpConnections,
  sweepIntervalMs: 60_000,
  drainMs: 10_000,
  attemptWaitMs: 60_000,
  rateLimit: { count: 120, windowMs: 60_000 },
};

export type DeliveryLog = LeasedWorkerLog;

export interface DeliveryEvents {
  mailSent(): void;
  mailFailed(): void;
}

export type DeliveryOutcome = 'sent' | 'retry' | 'failed' | 'pending';

/**
 * `wake`: a mail was queued in this process, look now. `stop`: finishes the sends in flight (up
 * to `drainMs`), then gives back any lease it still holds.
 */
export type DeliveryWorker = LeasedWorker;

export interface DeliveryWorkerOptions {
  store: OutboxStore;
  transport: MailTransport | undefined;
  holder: string;
  settings?: Partial<DeliverySettings>;
  now?: () => number;
  log: DeliveryLog;
  events: DeliveryEvents;
}

/** What one worker's steps share: its options, settled, and the attempts it has under way. */
interface Delivery extends Omit<DeliveryWorkerOptions, 'settings' | 'now'> {
  settings: DeliverySettings;
  now: () => number;
  /** Attempts started and not yet recorded, by mail id: they hold a connection and a lease. */
  inFlight: Map<string, Promise<unknown>>;
  /** Attempts `stop` gave up waiting for: a failure they come to is not recorded (the lease runs out). */
  abandoned: Set<string>;
}

/**
 * Delivers the outbox on the leased-outbox loop (src/outbox/leased-worker.ts: claims due mails
 * with a lease, so no two instances send one mail; polls every `idlePollMs` while idle, at once
 * after a wake, and straight again while mails keep coming), sends each, records the outcome.
 * The mail's own: the rate cap, one mail per SMTP connection, the lease renewed while the server
 * takes its time, and a drain that leaves an attempt it cut off to its lease. Without a
 * transport (development without SMTP_URL: mails are held for `mail show`) it only sweeps.
 */
export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const delivery: Delivery = {
    ...options,
    settings: { ...defaultDeliverySettings, ...options.settings },
    now: options.now ?? (() => Date.now()),
    inFlight: new Map(),
    abandoned: new Set(),
  };
  const { settings, transport, inFlight } = delivery;
  // When the attempts of the last rate window started, oldest first (at most `rateLimit.count`).
  const started: number[] = [];

  /** Attempts the rate cap still allows at `at`. */
  function rateAllowance(at: number): number {
    const { count, windowMs } = settings.rateLimit;
    while (started.length > 0 && (started[0] as number) <= at - windowMs) started.shift();
    return count - started.length;
  }

  /** Attempts a poll at `at` may start: one per free connection, within the rate cap. */
  function room(at: number): number | { liftsAt: number } {
    if (transport === undefined) return 0;
    // One mail per free connection: a mail waiting in nodemailer's queue behind a slow attempt
    // would be neither sent nor given back.
    const allowed = rateAllowance(at);
    // Capped: when the oldest start leaves the window.
    if (allowed <= 0) return { liftsAt: (started[0] as number) + settings.rateLimit.windowMs };
    return Math.min(settings.batch - inFlight.size, allowed);
  }

  return createLeasedWorker({
    noun: 'mail',
    queue: delivery.store,
    holder: delivery.holder,
    settings,
    now: delivery.now,
    log: delivery.log,
    room,
    deliver(mail, polledAt) {
      // Counted against the rate cap from the poll that claimed it.
      started.push(polledAt);
      return deliver(delivery, mail);
    },
    describe: (mail) => ({ mail: mail.id }),
    drain: (poll) => drain(delivery, poll),
  });
}

/** Log fields naming one attempt at a mail. */
function mailFields(mail: ClaimedMail) {
  return { mail: mail.id, kind: mail.kind, attempt: mail.attempts };
}

async function deliver(delivery: Delivery, mail: ClaimedMail): Promise<DeliveryOutcome> {
  const { store, transport, events, log, settings, inFlight } = delivery;
  const fields = mailFields(mail);
  if (mail.expiresAt !== null && mail.expiresAt <= delivery.now()) {
    await store.markFailed(mail.id, 'expired before it could be sent', false);
    events.mailFailed();
    log.warn(fields, 'mail expired before it could be sent');
    return 'failed';
  }
  if (mail.bodyText === null || mail.bodyHtml === null || transport === undefined) {
    await store.markFailed(mail.id, 'its body was erased', false);
    events.mailFailed();
    return 'failed';
  }
  const renewal = renewWhileSending(delivery, mail);
  const recorded = transport
    .send({
      id: mail.id,
      to: mail.recipient,
      subject: mail.subject,
      text: mail.bodyText,
      html: mail.bodyHtml,
    })
    .then((result) => record(delivery, mail, result))
    .finally(() => {
      clearInterval(renewal);
      inFlight.delete(mail.id);
    });
  inFlight.set(
    mail.id,
    recorded.catch(() => undefined),
  );
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), settings.attemptWaitMs);
  });
  const outcome = await Promise.race([recorded, waited]);
  clearTimeout(timer);
  if (outcome === 'pending') {
    log.warn(
      fields,
      'mail attempt still waiting for the SMTP server; its outcome is recorded when it answers',
    );
    recorded.catch((error: unknown) =>
      log.warn(
        { ...fields, err: error },
        'recording a mail delivery failed; it is tried again when its lease ends',
      ),
    );
  }
  return outcome;
}

/**
 * The lease is renewed until the outcome is recorded: an attempt the server is slow to answer
 * may still be accepted, and a second one must not start meanwhile. The caller clears it.
 */
function renewWhileSending(
  { store, holder, log, settings, now }: Delivery,
  mail: ClaimedMail,
): NodeJS.Timeout {
  const renewEveryMs = Math.max(1, Math.floor(settings.leaseMs / 3));
  const renewal = setInterval(() => {
    store
      .renewLease(mail.id, holder, now() + settings.leaseMs)
      .catch((error: unknown) =>
        log.warn(
          { ...mailFields(mail), err: error },
          'renewing a mail lease failed; trying again shortly',
        ),
      );
  }, renewEveryMs);
  renewal.unref();
  return renewal;
}

async function record(
  { store, holder, log, events, settings, now, abandoned }: Delivery,
  mail: ClaimedMail,
  result: SendResult,
): Promise<DeliveryOutcome> {
  const fields = mailFields(mail);
  const at = now();
  if (!result.ok && abandoned.has(mail.id)) {
    // Cut off by `stop`: the server may have taken the message before the cut, so the
    // lease runs out before anyone tries again (operations.md: when a mail can arrive twice).
    abandoned.delete(mail.id);
    return 'pending';
  }
  if (result.ok) {
    await store.markSent(mail.id, at);
    events.mailSent();
    log.info(fields, 'mail sent');
    return 'sent';
  }
  // Its secret still matters: the body stays for `mail retry` until it expires.
  const keepBody = mail.expiresAt === null || mail.expiresAt > at;
  if (result.permanent || at >= mail.retryUntil) {
    await store.markFailed(mail.id, result.error, keepBody);
    events.mailFailed();
    log.warn(
      { ...fields, error: result.error },
      result.permanent
        ? 'mail refused by the SMTP server: failed'
        : 'mail not delivered within its retry window: failed',
    );
    return 'failed';
  }
  const delayMs = backoffMs(mail.attempts, settings.retryBaseMs, settings.retryMaxMs);
  await store.markRetry(mail.id, holder, at + delayMs, result.error);
  log.warn(
    { ...fields, error: result.error, retryInSeconds: delayMs / 1000, setting: 'SMTP_URL' },
    'mail not delivered yet: will retry; if this goes on, check the SMTP server SMTP_URL names (host, port, TLS, credentials)',
  );
  return 'retry';
}

/**
 * The sends in flight (a poll goes on without an attempt slower than `attemptWaitMs`, which
 * still holds its mail), up to `drainMs`; those still waiting then keep their leases.
 */
async function drain(
  { settings, inFlight, abandoned, log, transport }: Delivery,
  poll: Promise<void> | undefined,
): Promise<readonly string[]> {
  let giveUp: NodeJS.Timeout | undefined;
  const deadline = new Promise((resolve) => {
    giveUp = setTimeout(resolve, settings.drainMs);
  });
  await Promise.race([poll, deadline]);
  while (inFlight.size > 0) {
    const settled = await Promise.race([
      Promise.all(inFlight.values()).then(() => true),
      deadline.then(() => false),
    ]);
    if (!settled) break;
  }
  clearTimeout(giveUp);
  const cut = [...inFlight.keys()];
  for (const id of cut) abandoned.add(id);
  if (cut.length > 0)
    log.warn(
      { mails: cut },
      'stopping with mail attempts still waiting for the SMTP server: their leases are left to run out before they are tried again (the server may have taken them already: such a mail can arrive twice)',
    );
  transport?.close();
  return cut;
}
