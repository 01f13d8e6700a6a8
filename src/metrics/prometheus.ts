import { Counter, Gauge, Registry } from 'prom-client';
import type {
  GateLoad,
  MailBacklog,
  Observer,
  RevocationReason,
  SignInOutcome,
  ThrottleScope,
} from '../observe/observer.js';
import { collectProcessDefaults } from './process-defaults.js';
import { createRequestTimer } from './request-timer.js';
import { createRequestHistogram } from './request-histogram.js';

const outcomes: readonly SignInOutcome[] = [
  'success',
  'invalid',
  'throttled',
  'overloaded',
  'unavailable',
  'csrf',
  'error',
];
const scopes: readonly ThrottleScope[] = ['email', 'ip', 'email_attempts', 'ip_attempts'];
const reasons: readonly RevocationReason[] = ['ended', 'user', 'limit'];

/** A gauge read from `read()` at scrape time: nothing is counted on the request path. */
function gaugeOf(registry: Registry, name: string, help: string, read: () => number) {
  return new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/**
 * A counter in `registry`. With `zeroFor`, every value of its one label exists from the start
 * at 0, so rate() and alert rules see a series; one without labels starts at 0 by itself.
 */
function counterOf<Label extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  zeroFor?: { label: Label; values: readonly string[] },
): Counter<Label> {
  const counter = new Counter<Label>({
    name,
    help,
    labelNames: zeroFor === undefined ? [] : [zeroFor.label],
    registers: [registry],
  });
  for (const value of zeroFor?.values ?? [])
    counter.inc({ [zeroFor?.label as Label]: value } as Partial<Record<Label, string>>, 0);
  return counter;
}

/** The hasher's and the sign-in door's load, read when scraped from what they hand over. */
function loadGauges(registry: Registry) {
  const watched: {
    hasher?: GateLoad;
    limits?: { concurrency: number; queueMax: number };
    door?: GateLoad;
  } = {};
  const gauges: [string, string, () => number][] = [
    [
      'gatehouse_hasher_active',
      'Password hashes and verifications running now.',
      () => watched.hasher?.active ?? 0,
    ],
    [
      'gatehouse_hasher_queued',
      'Password hashes and verifications waiting for a slot.',
      () => watched.hasher?.queued ?? 0,
    ],
    [
      'gatehouse_hasher_concurrency',
      'Hash slots (HASH_CONCURRENCY).',
      () => watched.limits?.concurrency ?? 0,
    ],
    [
      'gatehouse_hasher_queue_max',
      'Places in the hash queue (HASH_QUEUE_MAX); past it sign-ins are refused.',
      () => watched.limits?.queueMax ?? 0,
    ],
    [
      'gatehouse_signin_door_active',
      'Sign-ins let in past the door, being worked on.',
      () => watched.door?.active ?? 0,
    ],
    [
      'gatehouse_signin_door_waiting',
      'Sign-ins waiting at the door.',
      () => watched.door?.queued ?? 0,
    ],
  ];
  for (const [name, help, read] of gauges) gaugeOf(registry, name, help, read);
  return watched;
}

/** Sign-ins, throttle locks, database errors, session revocations and readiness. */
function signInMetrics(registry: Registry) {
  const signIns = counterOf(
    registry,
    'gatehouse_signins_total',
    'Sign-in attempts by outcome: success, invalid (wrong or malformed details), throttled, overloaded (refused at the door), unavailable (database), csrf (cross-site or missing/invalid CSRF token), error (a failure of ours).',
    { label: 'outcome', values: outcomes },
  );
  const locks = counterOf(
    registry,
    'gatehouse_throttle_locks_total',
    'Throttle counters that reached their limit and locked, by scope (email, ip, email_attempts, ip_attempts).',
    { label: 'scope', values: scopes },
  );
  const databaseErrors = counterOf(
    registry,
    'gatehouse_database_errors_total',
    'Database statements that failed (connection lost, timeout, lock wait given up, ...).',
  );
  const revocations = counterOf(
    registry,
    'gatehouse_session_revocations_total',
    "Sessions the server revoked, by reason: ended (sign-out, or replaced by signing in again), user (all of a user's), limit (oldest past SESSIONS_PER_USER_MAX).",
    { label: 'reason', values: reasons },
  );
  const ready = new Gauge({
    name: 'gatehouse_ready',
    help: 'The last readiness check: 1 ready, 0 not ready (database unreachable or draining).',
    registers: [registry],
  });
  return { signIns, locks, databaseErrors, revocations, ready };
}

/**
 * The service's Prometheus metrics, in a registry of their own (never prom-client's global
 * one, so two apps in one process do not collide), with Node's process defaults: CPU, memory,
 * heap, handles, file descriptors and event-loop delay (`nodejs_eventloop_lag_*`); not GC
 * durations (process-defaults.ts says why).
 */
export function createPrometheusMetrics(): { observer: Observer; registry: Registry } {
  const registry = new Registry();
  collectProcessDefaults(registry);
  // The site's routes are known once it registers them (registerMetrics); paths seen before
  // that are none.
  let isRoute: (path: string) => boolean = () => false;
  const requests = createRequestHistogram((path) => isRoute(path));
  registry.registerMetric(requests.metric as never);

  const { signIns, locks, databaseErrors, revocations, ready } = signInMetrics(registry);
  const load = loadGauges(registry);

  const mailSent = counterOf(
    registry,
    'gatehouse_mail_sent_total',
    'Mails this process delivered to the SMTP server.',
  );
  const mailFailed = counterOf(
    registry,
    'gatehouse_mail_failed_total',
    'Mails this process marked failed: refused for good (5xx), expired unsent, or undelivered after the retry window.',
  );
  const mailBacklog = backlogGauges(registry, 'mail', 'mail', 'mails', {
    held: 'Mails held in the outbox (queued where no SMTP_URL was set) until an instance with SMTP_URL sends them.',
  });
  const accountEvents = counterOf(
    registry,
    'gatehouse_account_events_total',
    'Account events this process recorded, by type (signin, password_reset, account_locked, …).',
    { label: 'type', values: [] },
  );
  const webhooksSent = counterOf(
    registry,
    'gatehouse_webhooks_sent_total',
    'Webhook deliveries this process made that the endpoint answered 2xx.',
  );
  const webhooksFailed = counterOf(
    registry,
    'gatehouse_webhooks_failed_total',
    'Webhook deliveries this process marked failed: not answered 2xx within the retry window.',
  );
  const webhookBacklog = backlogGauges(
    registry,
    'webhooks',
    'webhook delivery',
    'webhook deliveries',
  );

  const observer: Observer = {
    timeRequests(hasRoute) {
      isRoute = hasRoute;
      return createRequestTimer(requests.observe);
    },
    signIn: (outcome) => signIns.inc({ outcome }),
    throttleLock: (scope) => locks.inc({ scope }),
    databaseError: () => databaseErrors.inc(),
    sessionsRevoked: (reason, count) => {
      if (count > 0) revocations.inc({ reason }, count);
    },
    readiness: (isReady) => ready.set(isReady ? 1 : 0),
    watchHasher(hasherLoad, limits) {
      load.hasher = hasherLoad;
      load.limits = limits;
    },
    watchDoor(doorLoad) {
      load.door = doorLoad;
    },
    mailSent: () => mailSent.inc(),
    mailFailed: () => mailFailed.inc(),
    watchMail: (read) => mailBacklog.watch(read),
    webhookSent: () => webhooksSent.inc(),
    webhookFailed: () => webhooksFailed.inc(),
    watchWebhooks: (read) => webhookBacklog.watch(read),
    accountEvent: (type) => accountEvents.inc({ type }),
  };
  return { observer, registry };
}

/**
 * `gatehouse_<prefix>_queued` and `gatehouse_<prefix>_oldest_queued_age_seconds`, read from an
 * outbox when scraped: one read for both gauges, at most once a second; the last answer stands
 * if a read fails.
 */
function backlogGauges(
  registry: Registry,
  prefix: string,
  one: string,
  many: string,
  extra: { held?: string } = {},
) {
  let read: (() => Promise<MailBacklog>) | undefined;
  let backlog: MailBacklog = { queued: 0, oldestAgeSeconds: 0 };
  let reading: Promise<MailBacklog> | undefined;
  let readAt = -Infinity;
  const readBacklog = async () => {
    if (read === undefined || performance.now() - readAt < 1000) return backlog;
    reading ??= read()
      .then((value) => {
        readAt = performance.now();
        return (backlog = value);
      })
      .catch(() => backlog)
      .finally(() => (reading = undefined));
    return reading;
  };
  new Gauge({
    name: `gatehouse_${prefix}_queued`,
    help: `${many[0]?.toUpperCase()}${many.slice(1)} in the outbox waiting to be delivered (queued or being sent), across every instance.`,
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).queued);
    },
  });
  new Gauge({
    name: `gatehouse_${prefix}_oldest_queued_age_seconds`,
    help: `Age of the oldest ${one} waiting to be delivered; 0 when none waits.`,
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).oldestAgeSeconds);
    },
  });
  if (extra.held !== undefined)
    new Gauge({
      name: `gatehouse_${prefix}_held`,
      help: extra.held,
      registers: [registry],
      async collect() {
        this.set((await readBacklog()).held ?? 0);
      },
    });
  return {
    watch(reader: () => Promise<MailBacklog>) {
      read = reader;
    },
  };
}
