import type { SqliteCommitWatch } from '../db/sqlite-commit-watch.js';
import type { ActiveSession, FindActiveNow } from './active-session.js';
import { readCaches } from './caches.js';

/** Sessions whose check is kept at once; past it, all are forgotten (a new batch starts). */
const keptMax = readCaches.sqliteChecks.entries;
/**
 * The longest a check is kept even when the watch says nothing changed: a bound on what a watch
 * that stopped seeing commits (a file system whose reads miss SQLite's shared memory, a future
 * wal-index format) could serve. Reads of one session ask the database once a second at most.
 */
export const keptMaxAgeMs = 1000;

/**
 * The session check answered from memory while nothing was committed to the SQLite file since
 * it was made. Every look asks the wal-index header first (src/db/sqlite-commit-watch.ts): a
 * commit by anyone (a sign-out, a revocation by the CLI or another worker, a rename, a disable,
 * a sign-in elsewhere, a checkpoint) forgets every check kept, so a revocation still ends a
 * session on the next read, in every process. A check is kept only when made after a look
 * that found the header unchanged or newly read: a commit between that look and the query
 * makes the next look differ, and the check is made again. `check` must run on a connection
 * of its own, never inside a transaction (src/db/sqlite.ts, SqliteSessionChecks).
 */
export function sqliteChecksWhileUncommitted(
  check: FindActiveNow,
  commits: SqliteCommitWatch,
  now: () => number = () => performance.now(),
): FindActiveNow {
  const kept = new Map<string, { row: ActiveSession | null; at: number }>();
  return (sessionId) => {
    const look = commits.look();
    if (look !== 'same') kept.clear();
    if (look === 'unknown') return check(sessionId);
    const at = now();
    const known = kept.get(sessionId);
    if (known !== undefined && at - known.at < keptMaxAgeMs) return known.row;
    const row = check(sessionId);
    if (kept.size >= keptMax) kept.clear();
    kept.set(sessionId, { row, at });
    return row;
  };
}
