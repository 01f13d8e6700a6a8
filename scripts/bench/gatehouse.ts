// How the bench scripts (this runner, soak.ts, fairness.ts) start Gatehouse: the
// production environment on loopback, and an account added with the CLI before it starts.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { BenchError, gatehouseCli, root, type Env } from './common.ts';
import { childEnv } from './processes.ts';

export { gatehouseArgs } from './common.ts';

/** Attempt and failure limits out of the way, so the throttle does not shape what is measured. */
export const unthrottled: Env = {
  THROTTLE_EMAIL_MAX_FAILURES: '1000000',
  THROTTLE_IP_MAX_FAILURES: '1000000',
  THROTTLE_EMAIL_MAX_ATTEMPTS: '1000000',
  THROTTLE_IP_MAX_ATTEMPTS: '1000000',
};

export const randomSecret = (): string => randomBytes(33).toString('base64');

/** The SQLite database in `dataDir`, named as Gatehouse names it by default. */
export const sqliteUrl = (dataDir: string): string => `file:${path.join(dataDir, 'gatehouse.db')}`;

/** Where Gatehouse listens and keeps its data, and any other variables (all strings). */
export interface GatehouseOptions {
  port: number;
  dataDir: string;
  secret?: string | undefined;
  [variable: string]: string | number | boolean | undefined;
}

/**
 * Gatehouse's environment (without PATH and HOME: `childEnv` adds those): production on
 * 127.0.0.1:`port`, warnings only in the log, no request budget; `extra` adds or overrides
 * variables.
 */
export function gatehouseEnv({
  port,
  dataDir,
  secret = randomSecret(),
  ...extra
}: GatehouseOptions): Env {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
    AUTH_URL: `http://127.0.0.1:${port}`,
    AUTH_SECRET: secret,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // Every benchmark client is 127.0.0.1: the per-address request budget would measure itself.
    REQUEST_BUDGET_PER_SECOND: '0',
    ...(extra as Env),
  };
}

/**
 * The runner's Gatehouse: one process on SQLite in `dataDir` (unless `extra` names another
 * DATABASE_URL), fast paths on or off, limits out of the way.
 */
export function benchEnv({
  port,
  dataDir,
  secret,
  fastPaths,
  ...extra
}: GatehouseOptions & { fastPaths: boolean }): Env {
  return gatehouseEnv({
    port,
    dataDir,
    secret,
    DATABASE_URL: sqliteUrl(dataDir),
    FAST_PATHS: fastPaths ? 'on' : 'off',
    WORKERS: '1',
    ...unthrottled,
    ...(extra as Env),
  });
}

/**
 * `gatehouse users add` for `login` on the database `env` names (DATABASE_URL, else DATA_DIR's
 * SQLite file), the password on standard input as an operator would give it. `cli`: another
 * build's (a compared build migrates its own database: a newer one's migrations stop it).
 */
export function addUser(
  env: Env,
  { email: login, password: secret, name }: { email: string; password: string; name?: string },
  cli = gatehouseCli,
): void {
  const result = spawnSync(
    process.execPath,
    [
      cli,
      'users',
      'add',
      '--email',
      login,
      ...(name === undefined ? [] : ['--name', name]),
      '--password-stdin',
    ],
    { cwd: root, env: childEnv(env), input: `${secret}\n`, encoding: 'utf8', timeout: 60_000 },
  );
  if (result.status !== 0) {
    throw new BenchError(
      `users add failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`,
    );
  }
}
