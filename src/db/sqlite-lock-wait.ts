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
function isLockConflict(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  if (typeof errcode !== 'number') return false;
  const primary = errcode & 0xff;
  return primary === sqliteBusy || primary === sqliteLocked;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Retries a statement that met another process's lock after short timers, up to
 * `sqliteLockWaitMs`. SQLite would otherwise wait for the lock synchronously (its
 * busy timeout), freezing the event loop: health probes and session reads with it.
 */
class LockWaitingConnection implements DatabaseConnection {
  constructor(private readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const deadline = Date.now() + sqliteLockWaitMs;
    for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, maxRetryDelayMs)) {
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (error) {
        if (!isLockConflict(error) || Date.now() + delayMs > deadline) throw error;
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

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapped = this.#wrapped.get(connection);
    if (wrapped === undefined) {
      wrapped = new LockWaitingConnection(connection);
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
