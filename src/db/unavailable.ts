import { isConnectionLost } from './postgres.js';
import { isLockConflict } from './sqlite-lock-wait.js';

// PostgreSQL: query_canceled (the statement timeout), too_many_connections, and the server
// shutting down or starting (57P01-57P03, in isConnectionLost).
const unavailableCodes = new Set(['57014', '53300', 'ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * Whether an error says the database could not do the work now (a lock held past the wait, a
 * lost or refused connection, a statement timeout), as opposed to a fault in the request or in
 * our code: the answer is then 503 with Retry-After, never a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (isLockConflict(error) || isConnectionLost(error)) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && unavailableCodes.has(code)) return true;
  return /timeout exceeded when trying to connect|Query read timeout/.test(error.message);
}
