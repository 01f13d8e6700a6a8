import type { Kysely } from 'kysely';
import { during, StartFailure } from '../boot/start-failure.js';
import { knownVariables, parseConfig, type Config } from '../config/index.js';
import { registeredMails } from '../account/upkeep-registry.js';
import { unknownVariableWarnings } from '../config/read/unknown-variables.js';
import { migrateToLatest } from '../db/migrate.js';
import { openDatabase, type Dialect } from '../db/open.js';
import type { Database } from '../db/schema.js';
import { createServices } from '../services.js';
import type { Throttle } from '../auth/signin/throttle.js';
import type { Actor, OperatorPorts } from '../operator/operations.js';
import { readEmail } from '../users/email.js';
import type { User } from '../users/store.js';
import { sendWebhooksTo } from '../webhooks/emit.js';
import { sealAuditWith } from '../audit/seal.js';
import { CliError } from './prompt.js';

export interface CliContext {
  config: Config;
  db: Kysely<Database>;
  dialect: Dialect;
  services: ReturnType<typeof createServices>;
  out: (line: string) => void;
}

/** A database failure in the operator's words (the variable and the fix), as the service says it. */
async function explained<T>(config: Config, work: () => T | Promise<T>): Promise<T> {
  try {
    return await during('database', config, work);
  } catch (error) {
    if (error instanceof StartFailure) throw new CliError(error.message);
    throw error;
  }
}

/** Opens the same database the service uses (DATABASE_URL / DATA_DIR), migrated. */
export async function openCliContext(): Promise<CliContext> {
  // The CLI reads the same variables as the service: a misspelt DATABASE_URL would otherwise
  // send a command to a fresh SQLite file without a word.
  for (const warning of unknownVariableWarnings(process.env, knownVariables()))
    process.stderr.write(`gatehouse: warning: ${warning}\n`);
  const result = parseConfig(process.env, { requireSecret: false, mails: registeredMails });
  if (!result.ok)
    throw new CliError(`invalid configuration:\n  - ${result.problems.join('\n  - ')}`);
  for (const warning of result.warnings) process.stderr.write(`gatehouse: warning: ${warning}\n`);
  const config = result.config;
  const { db, dialect, sqlite, pgPool } = await explained(config, () =>
    openDatabase(config.databaseUrl, { createFolder: config.databaseVariable === 'DATA_DIR' }),
  );
  await explained(config, () => migrateToLatest(db));
  // An operator's change tells the application as the service's would: the running service
  // delivers what is written here (src/webhooks/).
  sendWebhooksTo(config.webhooks?.endpoints ?? []);
  // An operator's change is an audit entry too: it renews the seal as the service's do.
  sealAuditWith(config.auditKeys);
  // One hash at a time is plenty for an admin command.
  const services = createServices(db, {
    ...config,
    sqlite,
    pgPool,
    hashConcurrency: 1,
    hashQueueMax: 1,
  });
  return { config, db, dialect, services, out: (line) => process.stdout.write(`${line}\n`) };
}

/** How the CLI names itself in the events its operations record (shown to the user as the device). */
export const cliActor: Actor = { label: 'gatehouse CLI' };

/** The ports the operator operations take, over the CLI's database and stores. */
export function operatorPorts(context: CliContext): OperatorPorts & { throttle: Throttle } {
  return { db: context.db, now: () => Date.now(), throttle: context.services.throttle };
}

export function requireEmail(raw: string | undefined, option = '--email'): string {
  if (raw === undefined) throw new CliError(`${option} is required`, 2);
  const email = readEmail(raw);
  // The value is not repeated: a password typed after --email must not reach a log.
  if (email === null) throw new CliError(`${option} is not an email address`, 2);
  return email;
}

export async function findUserOrThrow(context: CliContext, email: string): Promise<User> {
  const user = await context.services.users.findByEmail(email);
  if (user === null) throw new CliError(`no user with email ${email}`);
  return user;
}

/** Whom an operation acts on, and as whom: the CLI. */
export interface CliTarget {
  userId: string;
  actor: Actor;
}

/**
 * Runs an operator operation on the user `--email` names, as the CLI. Refused when no user has
 * that email, and when the user went between the lookup and the change (another operator: the
 * operation answers `'missing'`).
 */
export async function onNamedUser<Result>(
  context: CliContext,
  email: string | undefined,
  operation: (
    ports: ReturnType<typeof operatorPorts>,
    target: CliTarget,
    user: User,
  ) => Promise<Result | 'missing'>,
): Promise<{ user: User; result: Exclude<Result, 'missing'> }> {
  const user = await findUserOrThrow(context, requireEmail(email));
  const result = await operation(
    operatorPorts(context),
    { userId: user.id, actor: cliActor },
    user,
  );
  if (result === 'missing') throw new CliError(`no user with email ${user.email}`);
  return { user, result: result as Exclude<Result, 'missing'> };
}
