import type { Pool as PgPool, QueryResult } from 'pg';
import { isConnectionLost } from '../db/postgres.js';
import {
  activeSessionSql,
  toActive,
  type ActiveSession,
  type FindActive,
} from './active-session.js';

interface Waiter {
  resolve(session: ActiveSession | null): void;
  reject(error: unknown): void;
}

/** Tries after a lost connection: as many as the pool can hold dead connections (its max). */
const connectionLostRetries = 10;

/** Ids per statement at most; a larger burst goes out in several. */
export const batchMaxIds = 256;

/**
 * PostgreSQL's refusals of a named statement when a pooler in transaction mode hands each
 * statement to whichever server connection is free: `42P05` (prepared on this server connection
 * already, by another client) and `26000` (prepared on another, not this one).
 */
const namedStatementRefusals = new Set(['42P05', '26000']);

function isNamedStatementRefused(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && namedStatementRefusals.has(code);
}

export interface FindActiveOptions {
  /** Named statements (DATABASE_PREPARED=on) until the server refuses one. */
  named: boolean;
  /** Told of every failed check (metrics). */
  onError: () => void;
  /** Where the one fall-back warning goes; none: it falls back without a word. */
  warn?: ((fields: object, message: string) => void) | undefined;
}

/**
 * The session check on PostgreSQL, batched: the checks asked for while the event loop handles
 * one round of I/O go out as one statement once that round is over (`setImmediate`). Measured
 * on this machine, the pg driver cost ~150 µs of Gatehouse's CPU per statement (socket write,
 * stream events, result building), against ~30 µs for SQLite's whole check; under load a round
 * holds many reads, and they now share that cost. Nothing is cached: each check reads the rows
 * as they are after the request arrived, so a revocation committed before it is always seen.
 * An idle service pays no wait: the round ends as soon as its I/O is handled.
 *
 * A named statement is parsed and planned once per pooled connection; behind a pooler in
 * transaction mode (`DATABASE_PREPARED=off`) an unnamed one is sent each time. A pooler that
 * the setting did not declare shows by its refusals (above): from the first one on, every check
 * is sent unnamed (the refused batch too, so no read fails for it), and one warning names the
 * setting. Unnamed is always correct, only a little slower; nothing else here names a statement.
 */
export function postgresFindActive(pool: PgPool, options: FindActiveOptions): FindActive {
  // The session check of every id in the batch, the statement SQLite runs for one.
  const activeSessionsSql = activeSessionSql('postgres');
  const namedQuery = { name: 'gatehouse_find_active_sessions', text: activeSessionsSql };
  const unnamedQuery = { text: activeSessionsSql };
  let named = options.named;
  const fallBack = (error: unknown) => {
    if (!named) return;
    named = false;
    options.warn?.(
      { setting: 'DATABASE_PREPARED', code: (error as { code?: unknown }).code },
      'PostgreSQL refused a named prepared statement: a pooler in transaction mode is in between (PgBouncer before 1.21, or without max_prepared_statements); session checks now go unnamed. Set DATABASE_PREPARED=off to say so from the start',
    );
  };
  let waiting: Map<string, Waiter[]> | undefined;

  const send = (batch: Map<string, Waiter[]>) => {
    const read = (asNamed: boolean) =>
      pool.query<ActiveSession & { sessionId: string }>({
        ...(asNamed ? namedQuery : unnamedQuery),
        values: [[...batch.keys()]],
      });
    // A read is safe to repeat: one on a connection the server had already ended goes again on
    // another (the pool drops the dead one), instead of failing the requests it serves. Each such
    // try fails at once; a server that is down fails to connect, which is not retried.
    // A batch sent named while another found the pooler goes again unnamed, as that one does.
    const attempt = (left: number): Promise<QueryResult<ActiveSession & { sessionId: string }>> => {
      const asNamed = named;
      return read(asNamed).catch((error: unknown) => {
        if (asNamed && isNamedStatementRefused(error)) {
          fallBack(error);
          return attempt(left);
        }
        return left > 0 && isConnectionLost(error) ? attempt(left - 1) : Promise.reject(error);
      });
    };
    attempt(connectionLostRetries).then(
      (result) => {
        const found = new Map(result.rows.map((row) => [row.sessionId, row]));
        for (const [sessionId, waiters] of batch) {
          const session = toActive(found.get(sessionId));
          for (const waiter of waiters) waiter.resolve(session);
        }
      },
      (error: unknown) => {
        options.onError();
        for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      },
    );
  };
  const flush = () => {
    const batch = waiting;
    waiting = undefined;
    if (batch !== undefined) send(batch);
  };

  return (sessionId) =>
    new Promise((resolve, reject) => {
      if (waiting === undefined) {
        waiting = new Map();
        setImmediate(flush);
      }
      // The same id asked for twice in one round is one row: both get it.
      const waiters = waiting.get(sessionId);
      if (waiters !== undefined) waiters.push({ resolve, reject });
      else waiting.set(sessionId, [{ resolve, reject }]);
      if (waiting.size >= batchMaxIds) {
        const full = waiting;
        waiting = undefined;
        send(full);
      }
    });
}
