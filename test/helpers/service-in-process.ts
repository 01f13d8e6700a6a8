import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { buildApp } from '../../src/app.js';
import { sealAuditWith } from '../../src/audit/seal.js';
import { createJweCodec } from '../../src/auth/session/jwe-codec.js';
import { registeredMails } from '../../src/account/upkeep-registry.js';
import { parseConfig, type Config } from '../../src/config/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/schema.js';
import { loggerOptions } from '../../src/log/options.js';
import { noObserver } from '../../src/observe/observer.js';
import { createMail, mailSettingsOf } from '../../src/mail/start.js';
import { addUser } from '../../src/operator/operations.js';
import { createServices } from '../../src/services.js';
import { readEmail } from '../../src/users/email.js';
import { createWebhooks } from '../../src/webhooks/start.js';

/** The service built from the source in the test's own process, listening on 127.0.0.1. */
export interface InProcessService {
  url: string;
  app: FastifyInstance;
  db: Kysely<Database>;
  /** Every line the service logged so far (pino's JSON lines, at LOG_LEVEL). */
  output(): string;
  /** `users add` as the CLI runs it: the same operation, actor and hash, without a process. */
  addUser(email: string, password: string): Promise<void>;
  /** Closes the app, then stops the mail and webhook workers and the hashing threads. */
  stop(): Promise<void>;
}

/** What only the built service does: the suites that need it start dist/ (account-service.ts). */
function refuseOutOfProcess(config: Config): void {
  const only = [
    config.workers > 1 && 'WORKERS',
    config.metrics !== undefined && 'METRICS_PORT',
    config.admin !== undefined && 'ADMIN_PORT',
  ].filter((name) => name !== false);
  if (only.length > 0)
    throw new Error(`${only.join(', ')}: start the built service (startBuiltService)`);
}

/**
 * The service as `npm start` puts it together (src/main.ts: the variables read once, the
 * database opened and migrated, the services, the outbox and its worker, the webhooks, the app),
 * but from the source, in this process: real HTTP and a real database, without a build, a child
 * process or its start-up. `env` is the whole environment, as a child's would be. What only the
 * process shows (start-up lines, refusals to start, signals, a cluster) is left to the suites
 * that start the built service.
 */
export async function startServiceInProcess(
  env: Record<string, string>,
): Promise<InProcessService> {
  const parsed = parseConfig(env, { mails: registeredMails });
  if (!parsed.ok) throw new Error(`invalid configuration:\n${parsed.problems.join('\n')}`);
  const config = parsed.config;
  refuseOutOfProcess(config);
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const { db, dialect, sqlite, sqliteChecks, pgPool } = openDatabase(config.databaseUrl, {
    production: config.env === 'production',
    createFolder: config.databaseVariable === 'DATA_DIR',
  });
  await migrateToLatest(db);
  sealAuditWith(config.auditKeys);
  // As src/main.ts: the workers log through the app's logger, made below.
  const log = {
    info: (fields: object, message: string) => app.log.info(fields, message),
    warn: (fields: object, message: string) => app.log.warn(fields, message),
  };
  const services = createServices(db, { ...config, sqlite, sqliteChecks, pgPool, log });
  const mail = await createMail(db, dialect, mailSettingsOf(config), { log, events: noObserver });
  const webhooks = createWebhooks(db, dialect, config.webhooks, { log, events: noObserver });
  const app = buildApp({
    config,
    db,
    dialect,
    ...services,
    codec: createJweCodec(),
    version: '9.9.9-test',
    logger: loggerOptions(config.logLevel, stream),
    mail: mail.queue,
  });
  await app.listen({ host: config.host, port: config.port });
  mail.worker.start();
  webhooks.worker?.start();
  return {
    url: `http://127.0.0.1:${config.port}`,
    app,
    db,
    output: () => lines.join(''),
    async addUser(email, password) {
      const address = readEmail(email);
      if (address === null) throw new Error(`not an address: ${email}`);
      const added = await addUser(
        { db, now: () => Date.now() },
        {
          email: address,
          name: address.split('@')[0] ?? '',
          passwordHash: await services.hasher.hash(password),
          verified: false,
          actor: { label: 'gatehouse CLI' },
        },
      );
      if (added === 'taken') throw new Error(`users add: ${email} exists`);
    },
    async stop() {
      await app.close();
      await mail.worker.stop();
      await webhooks.worker?.stop();
      await services.lastSeen.stop();
      await services.hasher.close();
      await db.destroy();
    },
  };
}
