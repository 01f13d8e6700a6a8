import fs from 'node:fs';

/**
 * Whether anything was committed to a WAL-mode SQLite database since the last look, from the
 * wal-index header in its `-shm` file. SQLite keeps two copies of that header at the start of
 * the file (48 bytes each, https://www.sqlite.org/walformat.html): every commit, by any
 * connection in any process, rewrites both (its change counter, last frame, checksums), and a
 * checkpoint that restarts the log rewrites its salts. SQLite's own readers decide whether the
 * database changed under them by comparing this header with the copy they hold; this does the
 * same with one `pread` of 96 bytes instead of a read transaction (two `fcntl` locks and a
 * statement), the largest part of a session read left (docs/performance.md).
 *
 * `look()` is `'same'` only when both copies read whole, equal to each other and to what the
 * previous look saw; a header being written (the copies differ), a file that cannot be read, or
 * a wal-index of another version is `'unknown'`: the caller asks the database.
 */
export interface SqliteCommitWatch {
  look(): 'same' | 'changed' | 'unknown';
  /** Closes the `-shm` file descriptor (the database is closing). */
  close(): void;
}

const headerBytes = 48;
// WALINDEX_MAX_VERSION, the wal-index header's first field (in the machine's byte order).
const walIndexVersion = 3007000;
const reopenEveryMs = 1000;

export function watchSqliteCommits(databaseFile: string): SqliteCommitWatch {
  const shmFile = `${databaseFile}-shm`;
  let fd: number | undefined;
  let lastOpenTry = -Infinity;
  let closed = false;
  const now = Buffer.alloc(headerBytes * 2);
  const seen = Buffer.alloc(headerBytes * 2);
  let haveSeen = false;

  const open = (): boolean => {
    if (fd !== undefined) return true;
    if (closed) return false;
    const at = performance.now();
    // The -shm file exists from the first read in WAL mode; until then, try again now and then.
    if (at - lastOpenTry < reopenEveryMs) return false;
    lastOpenTry = at;
    try {
      fd = fs.openSync(shmFile, 'r');
      return true;
    } catch {
      // No -shm yet, or none to read: the caller asks the database ('unknown').
      return false;
    }
  };

  return {
    look() {
      if (!open()) return 'unknown';
      let read: number;
      try {
        read = fs.readSync(fd as number, now, 0, now.length, 0);
      } catch {
        // A read that fails says nothing about commits: the caller asks the database.
        haveSeen = false;
        return 'unknown';
      }
      if (
        read !== now.length ||
        (now.readUInt32LE(0) !== walIndexVersion && now.readUInt32BE(0) !== walIndexVersion) ||
        now.compare(now, headerBytes, headerBytes * 2, 0, headerBytes) !== 0
      ) {
        haveSeen = false;
        return 'unknown';
      }
      if (haveSeen && now.equals(seen)) return 'same';
      now.copy(seen);
      haveSeen = true;
      return 'changed';
    },
    close() {
      closed = true;
      if (fd !== undefined) fs.closeSync(fd);
      fd = undefined;
    },
  };
}
