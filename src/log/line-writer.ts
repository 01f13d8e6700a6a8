import fs from 'node:fs';

/**
 * The most one write(2) carries on a pipe and stays whole: POSIX's PIPE_BUF, 4096 on Linux.
 * Cluster workers share the primary's stdout, so each of their writes stays below it.
 */
export const pipeAtomicBytes = 4096;
const defaultWriteBytesMax = 64 * 1024;
const defaultHeldBytesMax = 8 * 1024 * 1024;
const retryAfterBusyMs = 10;

export interface LineWriterOptions {
  /** The file descriptor lines go to (1, standard output, for the service). */
  fd: number;
  /** The most one write carries; lines are never split between writes. */
  writeBytesMax?: number;
  /**
   * Lines waiting past this many characters are dropped and counted: a reader that stopped
   * reading the pipe must not grow the heap without bound (a blocking write stopped the service).
   */
  heldBytesMax?: number;
}

/**
 * A pino destination that never blocks the event loop on the log: the lines written during one
 * turn of the loop go out together in one `fs.write` on libuv's thread pool, and lines written
 * while that write is under way go out in the next. A line reaches the file in the same turn of
 * the loop it was written in (no timer holds it), so a quiet service's log is as prompt as a
 * blocking one; a busy one makes one write per turn instead of one per line.
 */
export class LineWriter {
  readonly #fd: number;
  readonly #writeBytesMax: number;
  readonly #heldBytesMax: number;
  #held: string[] = [];
  #heldChars = 0;
  #busy = false;
  #broken = false;
  #dropped = 0;
  #idle: (() => void)[] = [];

  constructor(options: LineWriterOptions) {
    this.#fd = options.fd;
    this.#writeBytesMax = options.writeBytesMax ?? defaultWriteBytesMax;
    this.#heldBytesMax = options.heldBytesMax ?? defaultHeldBytesMax;
  }

  /** Lines dropped because the output fell too far behind (or was closed). */
  get dropped(): number {
    return this.#dropped;
  }

  /** pino's destination interface: one serialized line, newline included. */
  write(line: string): boolean {
    if (this.#broken || this.#heldChars + line.length > this.#heldBytesMax) {
      this.#dropped += 1;
      return true;
    }
    this.#held.push(line);
    this.#heldChars += line.length;
    if (!this.#busy) {
      this.#busy = true;
      setImmediate(this.#next);
    }
    return true;
  }

  /** Resolves once every line written so far is in the kernel's hands. */
  flush(): Promise<void> {
    if (!this.#busy) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /**
   * For `process.on('exit')`, where no callback runs any more: writes what is held with blocking
   * writes. A write already under way on the thread pool is the kernel's by then, or is lost with
   * the process (an exit that did not wait for `flush()`: a crash, not a drain).
   */
  flushSync(): void {
    if (this.#broken || this.#held.length === 0) return;
    const buffer = Buffer.from(this.#held.join(''));
    this.#held = [];
    this.#heldChars = 0;
    let offset = 0;
    for (let busyTries = 0; offset < buffer.length && busyTries < 1000;) {
      try {
        offset += fs.writeSync(this.#fd, buffer, offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
        busyTries += 1;
      }
    }
  }

  /** Takes the held lines up to the write limit, whole lines only, at least one. */
  #take(): Buffer {
    let bytes = 0;
    let count = 0;
    for (const line of this.#held) {
      const size = Buffer.byteLength(line);
      if (count > 0 && bytes + size > this.#writeBytesMax) break;
      bytes += size;
      count += 1;
    }
    const lines = count === this.#held.length ? this.#held : this.#held.slice(0, count);
    this.#held = count === this.#held.length ? [] : this.#held.slice(count);
    for (const line of lines) this.#heldChars -= line.length;
    return Buffer.from(lines.length === 1 ? (lines[0] as string) : lines.join(''), 'utf8');
  }

  readonly #next = (): void => {
    if (this.#held.length === 0 || this.#broken) {
      this.#busy = false;
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#send(this.#take(), 0);
  };

  #send(buffer: Buffer, offset: number): void {
    fs.write(this.#fd, buffer, offset, buffer.length - offset, null, (error, written) => {
      if (error === null) {
        if (offset + written < buffer.length) this.#send(buffer, offset + written);
        else this.#next();
      } else if (error.code === 'EAGAIN') {
        // A non-blocking pipe that is full: its reader is behind; try again shortly.
        setTimeout(() => this.#send(buffer, offset), retryAfterBusyMs);
      } else {
        // EPIPE, EBADF: nobody reads the log any more. Keep serving; count what is lost.
        this.#broken = true;
        this.#dropped += this.#held.length + 1;
        this.#held = [];
        this.#heldChars = 0;
        this.#next();
      }
    });
  }
}
