import { issuerOf } from './config/identity-providers.js';
import { learnOldHashKinds, schedulePruning } from './boot/background-work.js';
import cluster from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { countEventsWith } from './account/wing.js';
import type { AdminListener } from './admin/start.js';
import { buildApp } from './app.js';
import { loadOrCreateDevSecret } from './auth/bridge/dev-secret.js';
import { createJweCodec } from './auth/session/jwe-codec.js';
import { knownVariables, parseConfig, type Config } from './config/index.js';
import { registeredMails } from './account/upkeep-registry.js';
import { unknownVariableWarnings } from './config/read/unknown-variables.js';
import { migrateToLatest } from './db/migrate.js';
import { auditSealNote } from './audit/reseal.js';
import { sealAuditWith } from './audit/seal.js';
import { openDatabase } from './db/open.js';
import type { Database } from './db/schema.js';
import { readPackageVersion } from './health/version.js';
import { LineWriter, pipeAtomicBytes } from './log/line-writer.js';
import { prettyLine } from './log/pretty-line.js';
import { loggerOptions } from './log/options.js';
import { during, StartFailure } from './boot/start-failure.js';
import { startupSummary, writeInfoLine } from './boot/startup-line.js';
import { cliCommand } from './boot/cli-command.js';
import {
  checkSmtpAtStart,
  createMail,
  mailSettingsOf,
  mailStartRefusal,
  mailStartupNote,
  mailTransportLine,
  type Mail,
  type MailSettings,
} from './mail/start.js';
import { superviseWorkers } from './boot/supervise-workers.js';
import { noObserver, type Observer } from './observe/observer.js';
import { createProcessMetrics, serveClusterMetrics } from './metrics/start.js';
import { createServices } from './services.js';
import { createWebhooks, type Webhooks } from './webhooks/start.js';

function loadConfig(): Config {
  // Before the problems: a misspelt name often explains one (AUTH_SECRT, then "AUTH_SECRET is
  // required"). Workers get the primary's environment: it has spoken for them.
  if (cluster.isPrimary) {
    for (const warning of unknownVariableWarnings(process.env, knownVariables()))
      process.stderr.write(`gatehouse: warning: ${warning}\n`);
  }
  const result = parseConfig(process.env, { mails: registeredMails });
  if (!result.ok) {
    process.stderr.write(
      `gatehouse: invalid configuration\n${result.problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    process.exit(1);
  }
  if (cluster.isPrimary)
    for (const warning of result.warnings) process.stderr.write(`gatehouse: warning: ${warning}\n`);
  return result.config;
}

/** LOG_FORMAT: pretty for a person at a development terminal (`auto`), or when asked. */
const prettyLog = (config: Config) =>
  config.logFormat === 'pretty' ||
  (config.logFormat === 'auto' && config.env !== 'production' && process.stdout.isTTY === true);

/** Config → database → migrations → app → listen; drains on SIGTERM/SIGINT and exits 0. */
async function serve(config: Config, secrets: readonly string[], migrate: boolean): Promise<void> {
  const metrics =
    config.metrics === undefined
      ? undefined
      : await createProcessMetrics(cluster.isWorker ? 'worker' : 'process');
  const observer = metrics?.observer ?? noObserver;
  // Kysely times every query once it has a log function: only when there are metrics to keep.
  const { db, dialect, sqlite, sqliteChecks, pgPool } = await during('database', config, () =>
    openDatabase(config.databaseUrl, {
      ...databaseOptions(config),
      ...(metrics !== undefined && { onQueryError: observer.databaseError }),
    }),
  );
  if (migrate) await during('database', config, () => migrateToLatest(db));
  // Before anything is appended: each entry renews the audit head's seal (src/audit/seal.ts).
  sealAuditWith(config.auditKeys);
  const services = createServices(
    db,
    { ...config, sqlite, sqliteChecks, pgPool, log: { warn: (f, m) => app.log.warn(f, m) } },
    undefined,
    observer,
  );
  const mailSettings = mailSettingsOf(config);
  const mail = await createMail(db, dialect, mailSettings, {
    log: { info: (f, m) => app.log.info(f, m), warn: (f, m) => app.log.warn(f, m) },
    events: observer,
  });
  observer.watchMail(() => mail.store.backlog(Date.now()));
  countEventsWith((type) => observer.accountEvent(type));
  const webhooks = createWebhooks(db, dialect, config.webhooks, {
    log: { info: (f, m) => app.log.info(f, m), warn: (f, m) => app.log.warn(f, m) },
    events: observer,
  });
  if (webhooks.worker !== undefined)
    observer.watchWebhooks(() => webhooks.store.backlog(Date.now()));
  // Lines leave through the thread pool, never a blocking write on the event loop (a third of
  // a session read's time was the access line's write). A cluster's workers share one stdout:
  // each write stays whole on a pipe. What is held when the process exits is written then.
  const logOut = new LineWriter({
    fd: 1,
    ...(cluster.isWorker && { writeBytesMax: pipeAtomicBytes }),
    ...(prettyLog(config) && { format: prettyLine }),
  });
  process.on('exit', () => logOut.flushSync());
  let draining = false;
  let adminServer: AdminListener | undefined = undefined;
  const app = buildApp({
    config: { ...config, authSecrets: secrets },
    db,
    dialect,
    ...services,
    codec: createJweCodec(),
    version: readPackageVersion(new URL('../package.json', import.meta.url)),
    logger: loggerOptions(config.logLevel, logOut),
    isDraining: () => draining,
    observer,
    mail: mail.queue,
  });

  // Metrics first: a port that cannot be bound stops the start before any traffic is taken.
  const metricsConfig = config.metrics;
  const metricsServer =
    metricsConfig === undefined || metrics === undefined
      ? undefined
      : await during('metrics', config, () => metrics.listen(metricsConfig, app.log));
  const prune = schedulePruning(db, services, config, app.log);
  learnOldHashKinds(db, services, config, app.log);
  // Signals are handled from before the port opens: a SIGTERM that comes right after readiness
  // (an orchestrator's quick restart) drains and exits 0, never the default death by signal.
  const shutdown = (signal: string) => {
    if (draining) return;
    draining = true;
    observer.readiness(false);
    app.log.info({ signal }, 'draining: finishing in-flight requests');
    clearInterval(prune);
    app
      .close()
      .then(() => adminServer?.close())
      .then(() => mail.worker.stop())
      .then(() => webhooks.worker?.stop())
      .then(() => services.lastSeen.stop())
      .then(() => metricsServer?.close())
      .then(() => services.hasher.close())
      .then(() => db.destroy())
      // Every access line of the drained requests is written before the exit.
      .then(() => logOut.flush())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await during('listen', config, () => app.listen({ host: config.host, port: config.port }));
  if (draining) return;
  // After the public port: the admin listener is never that port (src/config/admin.ts).
  adminServer = await startAdmin(config, {
    db,
    services,
    observer,
    mail,
    webhooks,
    logger: loggerOptions(config.logLevel, logOut),
    isDraining: () => draining,
    log: app.log,
  });
  if (draining) return;
  // Ready once listening (migrations done); readiness probes and the drain update it.
  observer.readiness(true);
  mail.worker.start();
  webhooks.worker?.start();
  await sayAtStart(config, {
    db,
    users: services.users,
    mail,
    mailSettings,
    metricsPort: metricsServer?.port,
    log: app.log,
  });
}

type Services = ReturnType<typeof createServices>;

/** The admin listener, when ADMIN_PORT is set; its failure to listen stops the start. */
async function startAdmin(
  config: Config,
  deps: {
    db: Kysely<Database>;
    services: Pick<Services, 'throttle'>;
    observer: Observer;
    mail: Pick<Mail, 'queue' | 'store'>;
    webhooks: Pick<Webhooks, 'store'>;
    logger: ReturnType<typeof loggerOptions>;
    isDraining: () => boolean;
    log: FastifyBaseLogger;
  },
): Promise<AdminListener | undefined> {
  const adminConfig = config.admin;
  if (adminConfig === undefined) return undefined;
  return during('admin', config, async () =>
    // Loaded only when the admin API is configured: its app and routes are not every
    // service's start-up (docs/performance.md).
    (await import('./admin/start.js')).listenAdmin(
      adminConfig,
      {
        config,
        ports: {
          db: deps.db,
          now: () => Date.now(),
          throttle: deps.services.throttle,
          observer: deps.observer,
          mail: deps.mail.queue,
          mailStore: deps.mail.store,
          webhooks: deps.webhooks.store,
          origin: config.authUrl,
          accountPagesPath: config.page.accountPagesPath,
          inviteTtlSeconds: config.inviteTtlSeconds,
          auditRetentionDays: config.auditRetentionDays,
          sessionLifetime: config.session,
          providerName: (id: string) =>
            config.identityProviders.find((provider) => provider.id === id)?.name ?? id,
          issuerOf: (id: string) => {
            const provider = config.identityProviders.find((setting) => setting.id === id);
            return provider === undefined ? null : issuerOf(provider);
          },
          firebaseScrypt: config.firebaseScrypt,
        },
        logger: deps.logger,
        isDraining: deps.isDraining,
      },
      deps.log,
    ),
  );
}

/**
 * What a start tells the operator once it serves: mail's mode and transport, two-step sign-in
 * off, the audit seal, the metrics port, the summary line, no users yet.
 */
async function sayAtStart(
  config: Config,
  started: {
    db: Kysely<Database>;
    users: Pick<Services['users'], 'count'>;
    mail: Mail;
    mailSettings: MailSettings;
    metricsPort: number | undefined;
    log: FastifyBaseLogger;
  },
): Promise<void> {
  const { db, mail, mailSettings, log } = started;
  // Said once per start: by the one process, or the first worker of a cluster.
  const mailNote = mailStartupNote(mail.mode, mailSettings, cliCommand());
  const saysOnce = cluster.isPrimary || process.env.GATEHOUSE_WORKER_SLOT === '0';
  if (mailNote !== undefined && saysOnce) log[mail.mode === 'off' ? 'warn' : 'info'](mailNote);
  // Off by default in production without a key (src/config/second-factor.ts): said, as mail off is.
  if (config.secondFactor.mode === 'off' && saysOnce)
    log.warn(
      config.secondFactor.keys.length === 0
        ? 'two-step sign-in is off: set FACTOR_KEY (openssl rand -base64 33) to let people turn it on; accounts that have it still need it'
        : 'two-step sign-in is off (SECOND_FACTOR=off); accounts that have it still need it',
    );
  const sealNote = saysOnce ? await auditSealNote(db, cliCommand()) : undefined;
  if (sealNote !== undefined) log.warn({ setting: 'AUDIT_KEY' }, sealNote);
  const transportLine = mailTransportLine(mailSettings);
  if (mail.mode === 'send' && transportLine !== undefined && saysOnce) {
    log.info(transportLine.fields, transportLine.message);
    checkSmtpAtStart(mail, log);
  }
  if (started.metricsPort !== undefined) {
    log.info({ host: config.metrics?.host, port: started.metricsPort }, 'metrics at /metrics');
  }
  // One line per service: in a cluster the primary writes it (primary(), below).
  if (cluster.isPrimary) {
    const summary = startupSummary(config);
    log.info(summary.fields, summary.message);
  }
  if ((await started.users.count()) === 0) {
    log.warn(`no users yet: add one with \`${cliCommand()} users add --email you@example.com\``);
  }
}

/** The database as this service opens it: only the default file's folder is made. */
function databaseOptions(config: Config) {
  return {
    production: config.env === 'production',
    createFolder: config.databaseVariable === 'DATA_DIR',
  };
}

async function primary(config: Config): Promise<void> {
  const refusal = mailStartRefusal(mailSettingsOf(config), config);
  if (refusal !== undefined) throw new StartFailure(refusal);
  let secrets = config.authSecrets;
  if (secrets.length === 0) {
    const dev = loadOrCreateDevSecret(config.dataDir);
    secrets = [dev.secret];
    process.stderr.write(
      `gatehouse: warning: AUTH_SECRET is not set; using ${dev.created ? 'a new' : 'the'} development secret kept in ${config.dataDir}/auth-secret (set AUTH_SECRET in production)\n`,
    );
  }
  if (config.workers <= 1) return serve(config, secrets, true);

  await during('database', config, async () => {
    const { db } = openDatabase(config.databaseUrl, databaseOptions(config));
    try {
      await migrateToLatest(db);
    } finally {
      await db.destroy();
    }
  });
  // The workers get the secrets resolved here (a file already read, or the development one).
  const workerEnv = { AUTH_SECRET: secrets.join(','), AUTH_SECRET_FILE: undefined };
  if (config.metrics !== undefined) {
    // The primary has no pino logger; its few lines go to stderr in the same shape.
    const line = (fields: object, message: string) =>
      process.stderr.write(`gatehouse: ${message}: ${JSON.stringify(fields)}\n`);
    const metricsConfig = config.metrics;
    await during('metrics', config, () =>
      serveClusterMetrics(metricsConfig, { error: line, warn: line }),
    );
  }
  // Once the first worker listens: the service is reachable from then on. An info line, so
  // only where LOG_LEVEL lets a worker's info lines through.
  if (['info', 'debug', 'trace'].includes(config.logLevel)) {
    cluster.once('listening', () => {
      const summary = startupSummary(config);
      writeInfoLine(summary.fields, summary.message);
    });
  }
  superviseWorkers(config.workers, workerEnv);
}

/**
 * Starts the service: resolves once it listens (in a cluster primary, once the workers are
 * forked). A failure to start is reported on stderr and exits 1. Called by the bundle runner
 * (src/boot/run-bundle.ts), which needs to know when start-up is over.
 */
export function main(): Promise<void> {
  const config = loadConfig();
  const start = cluster.isPrimary ? primary(config) : serve(config, config.authSecrets, false);
  return start.catch((error: unknown) => {
    // Already in the operator's words: the variable and the fix, no error codes or stacks.
    if (error instanceof StartFailure) {
      process.stderr.write(`gatehouse: failed to start: ${error.message}\n`);
      process.exit(1);
    }
    const cause =
      error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`gatehouse: failed to start: ${message}${cause}\n`);
    process.exit(1);
  });
}
