import {
  SqliteDialect,
  type AbortableOperationOptions,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/** How long a statement may wait for another process's write lock before it fails (503). */
export const sqliteLockWaitMs = 3000;
const maxRetryDelayMs = 25;

const sqliteBusy = 5;
const sqliteLocked = 6;

/**
 * SQLITE_BUSY (another connection holds the lock), SQLITE_LOCKED, and their extended codes
 * (the primary code is the low byte): node:sqlite reports them as `errcode`.
 */
export function isLockConflict(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  if (typeof errcode !== 'number') return false;
  const primary = errcode & 0xff;
  return primary === sqliteBusy || primary === sqliteLocked;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Statements that succeed whether or not another process holds the write lock: under WAL a read
// never meets it, and a deferred `begin` takes no lock. Their success says nothing of the lock.
const succeedsUnderHeldLock =
  /^\s*(select|begin(?!\s+(immediate|exclusive))|commit|end|rollback|savepoint|release|pragma)\b/i;

/**
 * What this process knows of another process's hold on the write lock: since when statements
 * have met it. One wait is shared by every statement that meets the same hold: our statements
 * queue on one connection, so a wait of its own for each would add up along the queue (the
 * 50th sign-in answered after 50 waits). Once the hold has outlasted the wait, a statement gets
 * one try and fails at once if it meets the lock again.
 */
class LockHold {
  #since: number | null = null;
  #lastMetAt = 0;

  /** A statement met the lock at `now` (monotonic ms); returns when the shared wait ends. */
  met(now: number): number {
    // No statement met it for a whole wait: whatever held it then may have let go since.
    if (this.#since === null || now - this.#lastMetAt > sqliteLockWaitMs) this.#since = now;
    this.#lastMetAt = now;
    return this.#since + sqliteLockWaitMs;
  }

  /** A statement that needed the lock got it: the hold is over. */
  released(): void {
    this.#since = null;
  }
}

/**
 * Retries a statement that met another process's lock after short timers, until the lock has
 * been held `sqliteLockWaitMs` (shared, see `LockHold`). SQLite would otherwise wait for the
 * lock synchronously (its busy timeout), freezing the event loop: health probes and session
 * reads with it.
 */
class LockWaitingConnection implements DatabaseConnection {
  constructor(
    private readonly inner: DatabaseConnection,
    private readonly hold: LockHold,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let metLock = false;
    for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, maxRetryDelayMs)) {
      try {
        const result = await this.inner.executeQuery<R>(query);
        if (metLock || !succeedsUnderHeldLock.test(query.sql)) this.hold.released();
        return result;
      } catch (error) {
        if (!isLockConflict(error)) throw error;
        metLock = true;
        const now = performance.now();
        if (now + delayMs > this.hold.met(now)) throw error;
        await sleep(delayMs);
      }
    }
  }

  streamQuery<R>(
    query: CompiledQuery,
    chunkSize: number,
    options?: AbortableOperationOptions,
  ): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize, options);
  }
}

/** Kysely's SQLite driver with every statement, `begin` and `commit` included, lock-waiting. */
class LockWaitingDriver implements Driver {
  readonly #wrapped = new WeakMap<DatabaseConnection, LockWaitingConnection>();
  readonly #hold = new LockHold();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapped = this.#wrapped.get(connection);
    if (wrapped === undefined) {
      wrapped = new LockWaitingConnection(connection, this.#hold);
      this.#wrapped.set(connection, wrapped);
    }
    return wrapped;
  }

  // Kysely's SQLite driver runs these as statements on the connection it is given: ours.
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** `SqliteDialect` whose statements wait for other processes' locks off the event loop. */
export class LockWaitingSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    return new LockWaitingDriver(super.createDriver());
  }
}
