import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { LoopbackSmtp, type SmtpMode } from '../helpers/smtp.js';
import { startServiceInProcess } from '../helpers/service-in-process.js';
import { distDir, runNode } from '../helpers/spawn.js';

export const serviceSecret = 'account-test-secret-0123456789abcdefghijklmnop';

/** The service on a free port over a database of its own: in this process, or dist/'s. */
export interface AccountService {
  url: string;
  output(): string;
  /** `gatehouse <args>` against the same database. */
  cli(args: string[], stdin?: string): ReturnType<typeof runNode>;
  addUser(email: string, password: string): Promise<void>;
  stop(): Promise<void>;
}

/** A database for one service: a SQLite folder, or a fresh PostgreSQL database. */
export async function serviceDatabase(
  backend: 'sqlite' | 'postgres',
): Promise<{ env: Record<string, string>; dispose(): Promise<void> }> {
  if (backend === 'postgres') {
    const database = await createTestDatabase();
    return { env: { DATABASE_URL: database.url }, dispose: () => database.drop() };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-account-'));
  return {
    env: { DATA_DIR: dir },
    dispose: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** What every service of these suites runs with, besides its database and its own `env`. */
function serviceEnv(
  port: number,
  databaseEnv: Record<string, string>,
  env: Record<string, string>,
) {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    AUTH_SECRET: serviceSecret,
    LOG_LEVEL: 'warn',
    // Every request of a suite comes from 127.0.0.1, faster than a person: the per-address
    // request budget (50 a second) is under test in test/http/request-budget.test.ts, not here.
    REQUEST_BUDGET_PER_SECOND: '0',
    ...(process.env.GATEHOUSE_TEST_FAST_PATHS === 'off' && { FAST_PATHS: 'off' }),
    ...databaseEnv,
    ...env,
  };
}

/** A port given in `env` (to build AUTH_URL on before the start) is the one listened on. */
const portOf = async (env: Record<string, string>) =>
  env.PORT !== undefined ? Number(env.PORT) : freePort();

const cliOver = (databaseEnv: Record<string, string>) => (args: string[], stdin?: string) =>
  runNode('gatehouse-cli.cjs', args, databaseEnv, stdin);

/**
 * The service from the source, in this process, over real HTTP (test/helpers/service-in-process.ts):
 * what the account suites test is the service's answers, not its bundle or its start-up.
 * `cli` is still the built CLI (`npm run build` first where a suite uses it).
 */
export async function startAccountService(
  databaseEnv: Record<string, string>,
  env: Record<string, string> = {},
): Promise<AccountService> {
  const service = await startServiceInProcess(serviceEnv(await portOf(env), databaseEnv, env));
  return {
    url: service.url,
    output: service.output,
    cli: cliOver(databaseEnv),
    addUser: service.addUser,
    stop: service.stop,
  };
}

/**
 * The built service (dist/) in a child process: for the suites whose subject is what only the
 * process shows (its start-up lines, refusals to start, its whole output).
 */
export async function startBuiltService(
  databaseEnv: Record<string, string>,
  env: Record<string, string> = {},
): Promise<AccountService> {
  const port = await portOf(env);
  const child = spawn(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
    env: { PATH: process.env.PATH ?? '', ...serviceEnv(port, databaseEnv, env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // A start (migrations included) may take seconds on a loaded machine: a deadline, not a count.
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/api/health/ready`)).status === 200) break;
    } catch {
      // Not listening yet: poll again.
    }
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`the service did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const cli = cliOver(databaseEnv);
  return {
    url,
    output: () => output,
    cli,
    async addUser(email, password) {
      const added = await cli(['users', 'add', '--email', email, '--password-stdin'], password);
      if (added.code !== 0) throw new Error(`users add failed: ${added.stderr}`);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** How a service is started over a database: startAccountService, or one built on it. */
export type StartService<S extends AccountService> = (
  databaseEnv: Record<string, string>,
  env: Record<string, string>,
) => Promise<S>;

/** The service over a database of its own, with users. */
export interface OwnService<S extends AccountService = AccountService> {
  service: S;
  /** The database's variables (DATA_DIR or DATABASE_URL), as the CLI needs them. */
  databaseEnv: Record<string, string>;
  /** Stops the service, then drops the database. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  backend?: 'sqlite' | 'postgres';
  /** The service's variables. */
  env?: Record<string, string>;
  /** Addresses to add, each with `password`. */
  users?: readonly string[];
  password?: string;
}

/** A production service with mail off: no SMTP_URL, and the variables production requires. */
export const productionWithoutMail: Record<string, string> = {
  NODE_ENV: 'production',
  AUTH_URL: 'https://auth.example',
  AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
};

export function startService(options?: ServiceOptions): Promise<OwnService>;
export function startService<S extends AccountService>(
  options: ServiceOptions & { start: StartService<S> },
): Promise<OwnService<S>>;
export async function startService(
  options: ServiceOptions & { start?: StartService<AccountService> } = {},
): Promise<OwnService> {
  const database = await serviceDatabase(options.backend ?? 'sqlite');
  const start = options.start ?? startAccountService;
  let service: AccountService | undefined;
  const close = async () => {
    await service?.stop();
    await database.dispose();
  };
  try {
    service = await start(database.env, options.env ?? {});
    for (const email of options.users ?? []) {
      await service.addUser(email, options.password ?? 'correct horse battery staple');
    }
    return { service, databaseEnv: database.env, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The service mailing a loopback SMTP server, over a database of its own, with users. */
export interface MailService<S extends AccountService = AccountService> extends OwnService<S> {
  smtp: LoopbackSmtp;
  /** Stops the service, drops the database, then stops the SMTP server. */
  close(): Promise<void>;
}

export interface MailServiceOptions extends ServiceOptions {
  smtpMode?: SmtpMode;
  /** More variables for the service (SMTP_URL and MAIL_FROM are set). */
  env?: Record<string, string>;
}

export function startMailService(options?: MailServiceOptions): Promise<MailService>;
export function startMailService<S extends AccountService>(
  options: MailServiceOptions & { start: StartService<S> },
): Promise<MailService<S>>;
export async function startMailService(
  options: MailServiceOptions & { start?: StartService<AccountService> } = {},
): Promise<MailService> {
  const smtp = await LoopbackSmtp.start(options.smtpMode ?? 'up');
  try {
    const own = await startService({
      ...options,
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'Acme <no-reply@acme.test>', ...options.env },
    });
    return {
      ...own,
      smtp,
      close: async () => {
        await own.close();
        await smtp.close();
      },
    };
  } catch (error) {
    await smtp.close();
    throw error;
  }
}
