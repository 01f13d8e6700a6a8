import type { SqliteCommitWatch } from '../db/sqlite-commit-watch.js';
import type { ActiveSession, FindActiveNow } from './active-session.js';

/** Sessions whose check is kept at once; past it, all are forgotten (a new batch starts). */
const keptMax = 50_000;

/**
 * The session check answered from memory while nothing was committed to the SQLite file since
 * it was made. Every look asks the wal-index header first (src/db/sqlite-commit-watch.ts): a
 * commit by anyone (a sign-out, a revocation by the CLI or another worker, a rename, a disable,
 * a sign-in elsewhere, a checkpoint) forgets every check kept, so a revocation still ends a
 * session on the next read, on every process. A check is kept only when made after a look
 * that found the header unchanged or newly read: a commit between that look and the query
 * makes the next look differ, and the check is made again.
 */
export function checksWhileUncommitted(
  check: FindActiveNow,
  commits: SqliteCommitWatch,
): FindActiveNow {
  const kept = new Map<string, ActiveSession | null>();
  return (sessionId) => {
    const look = commits.look();
    if (look !== 'same') kept.clear();
    if (look === 'unknown') return check(sessionId);
    const known = kept.get(sessionId);
    if (known !== undefined) return known;
    const row = check(sessionId);
    if (kept.size >= keptMax) kept.clear();
    kept.set(sessionId, row);
    return row;
  };
}
