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
  /** How long a line may wait for company before it is written (`defaultLingerMs`). */
  lingerMs?: number;
  /** Each line as written (LOG_FORMAT=pretty: src/log/pretty-line.ts); as it is when absent. */
  format?: (line: string) => string;
}

/**
 * How long a line may wait for others to share its write. Under load a write carries hundreds
 * of lines instead of the few one turn of the loop makes: on one core the thread pool's
 * hand-over costs about as much as the write itself, once per write (docs/performance.md).
 */
export const defaultLingerMs = 25;
/** Lines held past this many characters go out at once, without waiting for the linger. */
const defaultBatchChars = 16 * 1024;

/**
 * A pino destination that never blocks the event loop on the log: lines are held for up to
 * `lingerMs` (or until `batchChars` are held) and go out together in one `fs.write` on libuv's
 * thread pool; lines written while that write is under way go out in the next. `flush()` sends
 * what is held at once and resolves when it is in the kernel's hands (the drain waits for it);
 * `flushSync()` writes it with blocking writes (the exit handler). What a process killed
 * outright held, at most `lingerMs` of lines, is lost with it.
 */
export class LineWriter {
  readonly #fd: number;
  readonly #writeBytesMax: number;
  readonly #heldBytesMax: number;
  readonly #lingerMs: number;
  readonly #batchChars: number;
  readonly #format: ((line: string) => string) | undefined;
  #held: string[] = [];
  #heldChars = 0;
  /** A write is on the thread pool. */
  #sending = false;
  #timer: NodeJS.Timeout | undefined;
  #broken = false;
  #dropped = 0;
  #idle: (() => void)[] = [];

  constructor(options: LineWriterOptions) {
    this.#fd = options.fd;
    this.#writeBytesMax = options.writeBytesMax ?? defaultWriteBytesMax;
    this.#format = options.format;
    this.#heldBytesMax = options.heldBytesMax ?? defaultHeldBytesMax;
    this.#lingerMs = options.lingerMs ?? defaultLingerMs;
    this.#batchChars = Math.min(defaultBatchChars, this.#writeBytesMax);
  }

  /** Lines dropped because the output fell too far behind (or was closed). */
  get dropped(): number {
    return this.#dropped;
  }

  /** pino's destination interface: one serialized line, newline included. */
  write(written: string): boolean {
    const line = this.#format === undefined ? written : this.#format(written);
    if (this.#broken || this.#heldChars + line.length > this.#heldBytesMax) {
      this.#dropped += 1;
      return true;
    }
    this.#held.push(line);
    this.#heldChars += line.length;
    if (!this.#sending) this.#schedule();
    return true;
  }

  /** Resolves once every line written so far is in the kernel's hands. */
  flush(): Promise<void> {
    if (this.#held.length === 0 && !this.#sending) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.#idle.push(resolve));
    if (!this.#sending) this.#next();
    return done;
  }

  /**
   * For `process.on('exit')`, where no callback runs any more: writes what is held with blocking
   * writes. A write already under way on the thread pool is the kernel's by then, or is lost with
   * the process (an exit that did not wait for `flush()`: a crash, not a drain).
   */
  flushSync(): void {
    this.#cancelTimer();
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

  /** With no write under way: send now if enough is held or a flush waits, else linger. */
  #schedule(): void {
    if (this.#heldChars >= this.#batchChars || this.#idle.length > 0) this.#next();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(this.#next, this.#lingerMs);
      // The exit handler writes what is held; the timer must not keep the process alive.
      this.#timer.unref();
    }
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
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

  /** Sends what is held now (the linger's timer, a full batch, a flush). */
  readonly #next = (): void => {
    this.#cancelTimer();
    if (this.#held.length === 0 || this.#broken) {
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#sending = true;
    this.#send(this.#take(), 0);
  };

  /** A write finished: what was held meanwhile waits for its batch, its linger or a flush. */
  #sent(): void {
    this.#sending = false;
    if (this.#held.length === 0 || this.#broken) {
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#schedule();
  }

  #send(buffer: Buffer, offset: number): void {
    fs.write(this.#fd, buffer, offset, buffer.length - offset, null, (error, written) => {
      if (error === null) {
        if (offset + written < buffer.length) this.#send(buffer, offset + written);
        else this.#sent();
      } else if (error.code === 'EAGAIN') {
        setTimeout(() => this.#send(buffer, offset), retryAfterBusyMs);
      } else {
        this.#broken = true;
        this.#dropped += this.#held.length + 1;
        this.#held = [];
        this.#heldChars = 0;
        this.#sent();
      }
    });
  }
}
