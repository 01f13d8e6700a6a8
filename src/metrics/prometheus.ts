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

  const signIns = new Counter({
    name: 'gatehouse_signins_total',
    help: 'Sign-in attempts by outcome: success, invalid (wrong or malformed details), throttled, overloaded (refused at the door), unavailable (database), csrf (cross-site or missing/invalid CSRF token), error (a failure of ours).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const locks = new Counter({
    name: 'gatehouse_throttle_locks_total',
    help: 'Throttle counters that reached their limit and locked, by scope (email, ip, email_attempts, ip_attempts).',
    labelNames: ['scope'],
    registers: [registry],
  });
  const databaseErrors = new Counter({
    name: 'gatehouse_database_errors_total',
    help: 'Database statements that failed (connection lost, timeout, lock wait given up, ...).',
    registers: [registry],
  });
  const revocations = new Counter({
    name: 'gatehouse_session_revocations_total',
    help: "Sessions the server revoked, by reason: ended (sign-out, or replaced by signing in again), user (all of a user's), limit (oldest past SESSIONS_PER_USER_MAX).",
    labelNames: ['reason'],
    registers: [registry],
  });
  const ready = new Gauge({
    name: 'gatehouse_ready',
    help: 'The last readiness check: 1 ready, 0 not ready (database unreachable or draining).',
    registers: [registry],
  });
  // Every label value exists from the start, so rate() and alert rules see a series at 0.
  for (const outcome of outcomes) signIns.inc({ outcome }, 0);
  for (const scope of scopes) locks.inc({ scope }, 0);
  for (const reason of reasons) revocations.inc({ reason }, 0);

  const hasher: { load?: GateLoad; limits?: { concurrency: number; queueMax: number } } = {};
  gaugeOf(
    registry,
    'gatehouse_hasher_active',
    'Password hashes and verifications running now.',
    () => hasher.load?.active ?? 0,
  );
  gaugeOf(
    registry,
    'gatehouse_hasher_queued',
    'Password hashes and verifications waiting for a slot.',
    () => hasher.load?.queued ?? 0,
  );
  gaugeOf(
    registry,
    'gatehouse_hasher_concurrency',
    'Hash slots (HASH_CONCURRENCY).',
    () => hasher.limits?.concurrency ?? 0,
  );
  gaugeOf(
    registry,
    'gatehouse_hasher_queue_max',
    'Places in the hash queue (HASH_QUEUE_MAX); past it sign-ins are refused.',
    () => hasher.limits?.queueMax ?? 0,
  );
  let door: GateLoad | undefined;
  gaugeOf(
    registry,
    'gatehouse_signin_door_active',
    'Sign-ins let in past the door, being worked on.',
    () => door?.active ?? 0,
  );
  gaugeOf(
    registry,
    'gatehouse_signin_door_waiting',
    'Sign-ins waiting at the door.',
    () => door?.queued ?? 0,
  );

  const mailSent = new Counter({
    name: 'gatehouse_mail_sent_total',
    help: 'Mails this process delivered to the SMTP server.',
    registers: [registry],
  });
  const mailFailed = new Counter({
    name: 'gatehouse_mail_failed_total',
    help: 'Mails this process marked failed: refused for good (5xx), expired unsent, or undelivered after the retry window.',
    registers: [registry],
  });
  mailSent.inc(0);
  mailFailed.inc(0);
  const mailBacklog = backlogGauges(registry, 'mail', 'mail', 'mails', {
    held: 'Mails held in the outbox (queued where no SMTP_URL was set) until an instance with SMTP_URL sends them.',
  });
  const accountEvents = new Counter({
    name: 'gatehouse_account_events_total',
    help: 'Account events this process recorded, by type (signin, password_reset, account_locked, …).',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const webhooksSent = new Counter({
    name: 'gatehouse_webhooks_sent_total',
    help: 'Webhook deliveries this process made that the endpoint answered 2xx.',
    registers: [registry],
  });
  const webhooksFailed = new Counter({
    name: 'gatehouse_webhooks_failed_total',
    help: 'Webhook deliveries this process marked failed: not answered 2xx within the retry window.',
    registers: [registry],
  });
  webhooksSent.inc(0);
  webhooksFailed.inc(0);
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
    watchHasher(load, limits) {
      hasher.load = load;
      hasher.limits = limits;
    },
    watchDoor(load) {
      door = load;
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
