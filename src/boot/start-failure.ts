import path from 'node:path';
import type { Config } from '../config/index.js';
import { postgresTarget } from '../db/open.js';
import { MissingFolderError } from '../db/sqlite.js';

/** What was being done when a start failed: each names its own variables. */
export type StartStage = 'database' | 'listen' | 'metrics' | 'admin';

/** A failure already worded for the operator: the variable to change and how. */
export class StartFailure extends Error {}

interface SystemError extends Error {
  code?: string;
  errno?: number;
  errcode?: number;
  path?: string;
  syscall?: string;
  errors?: unknown[];
}

/** The error, its causes and an AggregateError's first member: the first with a code. */
function coded(error: unknown): SystemError | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const candidate = current as SystemError;
    if (typeof candidate.code === 'string') return candidate;
    current = candidate.errors?.[0] ?? candidate.cause;
  }
  return undefined;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The messages of the error and its causes, for the failures pg words but does not code. */
function messages(error: unknown): string {
  const seen = new Set<unknown>();
  const found: string[] = [];
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    found.push(current.message);
    current = current.cause;
  }
  return found.length > 0 ? found.join(': ') : String(error);
}

const uid = () => {
  const id = process.getuid?.();
  return id === undefined ? 'this user' : `this user (uid ${id})`;
};

const denied = new Set(['EACCES', 'EPERM']);

/** Why a connection to PostgreSQL failed, in words, and what to check. */
const connectionProblems: Record<string, [string, string]> = {
  ECONNREFUSED: ['connection refused', 'check the host/port or that the server is running'],
  ENOTFOUND: ['host not found', 'check the host name'],
  EAI_AGAIN: ['host name lookup failed', 'check the host name and DNS'],
  ETIMEDOUT: ['no answer', 'check the host/port and any firewall between'],
  EHOSTUNREACH: ['host unreachable', 'check the host and the network'],
  ENETUNREACH: ['network unreachable', 'check the host and the network'],
  ECONNRESET: [
    'connection reset',
    'check the port, and sslmode if the server requires TLS (?sslmode=require)',
  ],
};

function describePostgres(config: Config, error: unknown): string | undefined {
  const target = postgresTarget(config.databaseUrl);
  const at = `PostgreSQL at ${target.host}:${target.port}`;
  const failure = coded(error);
  const code = failure?.code;
  if (code !== undefined && Object.hasOwn(connectionProblems, code)) {
    const [why, fix] = connectionProblems[code] as [string, string];
    return `DATABASE_URL: cannot reach ${at} (${why}); ${fix}`;
  }
  // pg reads the URL with WHATWG URL and masks the input in its error: say which variable.
  if (code === 'ERR_INVALID_URL')
    return `DATABASE_URL: is not a URL the PostgreSQL driver can read; check the port, and percent-encode @ : / ? # in the user name and password (e.g. postgresql://gatehouse:p%40ss@db:5432/gatehouse)`;
  const text = failure?.message ?? message(error);
  const said = messages(error);
  // pg-pool's and pg's own words for a connection that got no answer in time (3 s).
  if (/timeout exceeded when trying to connect|connection timeout/i.test(said))
    return `DATABASE_URL: cannot reach ${at} (no answer within 3 s); check the host/port and any firewall between`;
  if (/Connection terminated unexpectedly/.test(said))
    return `DATABASE_URL: ${at} closed the connection before answering; check that the port is PostgreSQL's, and sslmode if the server requires TLS (?sslmode=require)`;
  // SQLSTATE class 28: invalid authorisation. PostgreSQL's own text names the user, never
  // the password.
  if (code === '28P01' || code === '28000')
    return `DATABASE_URL: ${at} refused the login (${text}); check the user name and password in DATABASE_URL`;
  if (/client password must be a string/.test(said))
    return `DATABASE_URL: ${at} asks for a password and DATABASE_URL has none; add it (postgresql://user:password@host/database)`;
  if (code === '3D000')
    return `DATABASE_URL: ${at} has no database "${target.database}"; create it (createdb ${target.database}) or correct the name in DATABASE_URL`;
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code))
    return `DATABASE_URL: ${at} refused: ${text}`;
  return undefined;
}

function describeSqlite(config: Config, error: unknown): string | undefined {
  const variable = config.databaseVariable;
  if (error instanceof MissingFolderError)
    return `DATABASE_URL: the folder ${error.folder} does not exist; create it (mkdir -p ${error.folder}) or correct the path (Gatehouse makes a folder only for the default database in DATA_DIR)`;
  const failure = coded(error);
  const file = path.resolve(config.databaseUrl.replace(/^file:/, ''));
  const fix = `make it writable by ${uid()}, or set ${variable} to a writable place`;
  if (failure?.code !== undefined && denied.has(failure.code)) {
    const what = failure.syscall === 'mkdir' ? 'create the folder' : 'open';
    return `${variable}: cannot ${what} ${failure.path ?? file} (permission denied); ${fix}`;
  }
  if (failure?.code === 'EROFS')
    return `${variable}: cannot write ${failure.path ?? file} (read-only file system); set ${variable} to a writable place`;
  if (failure?.code === 'ENOSPC')
    return `${variable}: cannot write ${failure.path ?? file} (no space left on the device)`;
  if (failure?.code === 'ERR_SQLITE_ERROR') {
    // SQLite's primary result codes (the low byte of an extended one): 8 read-only, 14
    // cannot open, 26 not a database.
    const primary = (failure.errcode ?? 0) & 0xff;
    if (primary === 26)
      return `${variable}: ${file} is not a SQLite database (${failure.message}); point ${variable} at the right file, or move this one away to start afresh`;
    const hint =
      primary === 8 || primary === 14
        ? `; check that the file and its folder are writable by ${uid()}`
        : '';
    return `${variable}: SQLite cannot use ${file} (${failure.message})${hint}`;
  }
  return undefined;
}

function describeListen(
  names: { port: string; host: string },
  where: { host: string; port: number },
  error: unknown,
): string | undefined {
  const code = coded(error)?.code;
  const at = `${names.port} ${where.port} on ${where.host}`;
  if (code === 'EADDRINUSE') return `${at} is in use; stop the other process or set ${names.port}`;
  if (code === 'EACCES')
    return `${at}: permission denied (ports below 1024 need privileges); set ${names.port} to 1024 or above`;
  if (code === 'EADDRNOTAVAIL')
    return `${names.host} ${where.host} is not an address of this machine; set ${names.host} (e.g. ${names.host}=0.0.0.0 for every interface)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `${names.host} ${where.host} is not a known host name; set ${names.host} to an address (e.g. ${names.host}=0.0.0.0)`;
  return undefined;
}

/** The failure in an operator's words, naming the variable and the fix; undefined: unknown. */
export function describeStartFailure(
  stage: StartStage,
  error: unknown,
  config: Config,
): string | undefined {
  switch (stage) {
    case 'database':
      return /^postgres(ql)?:\/\//.test(config.databaseUrl)
        ? describePostgres(config, error)
        : describeSqlite(config, error);
    case 'listen':
      return describeListen({ port: 'PORT', host: 'HOST' }, config, error);
    case 'metrics':
      return config.metrics === undefined
        ? undefined
        : describeListen({ port: 'METRICS_PORT', host: 'METRICS_HOST' }, config.metrics, error);
    case 'admin':
      return config.admin === undefined
        ? undefined
        : describeListen({ port: 'ADMIN_PORT', host: 'ADMIN_HOST' }, config.admin, error);
  }
}

/**
 * Runs one step of the start; a failure it can explain becomes a `StartFailure` carrying the
 * explanation, any other is rethrown as it is.
 */
export async function during<T>(
  stage: StartStage,
  config: Config,
  work: () => T | Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const described = describeStartFailure(stage, error, config);
    if (described === undefined) throw error;
    throw new StartFailure(described, { cause: error });
  }
}
