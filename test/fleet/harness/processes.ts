// Process bookkeeping for the fleet: every child it spawns is registered here with the way to
// stop it, so an error, Ctrl-C, a watchdog or a failed test never leaves a server holding a
// port, a CPU or a temp folder.
//
// Not test/helpers/processes.ts: that one starts one server and stops it; this one keeps a
// registry that a signal handler or an exit hook can empty, and times each exit, which the
// kill -9 scenario measures. Its `freePort` differs too (see below).
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when the exit event came, before any awaiting code ran. */
  at: number;
}

export interface Tracked {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number | undefined;
  readonly exited: Promise<Exit>;
  alive(): boolean;
  /** The last 8000 characters it wrote to stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

/** Stop functions of everything still running, newest last; each removes itself when done. */
const running = new Set<Tracked>();
const tempDirs = new Set<string>();

/**
 * Registers `child` under `name`; `stop` ends it gracefully (the default: SIGTERM, then SIGKILL
 * after `graceMs`). Returns an object whose `exited` resolves to `{ code, signal, at }` once.
 */
export function track(
  child: ChildProcess,
  name: string,
  { stop, graceMs = 5000 }: { stop?: () => Promise<unknown>; graceMs?: number } = {},
): Tracked {
  let output = '';
  const keep = (chunk: Buffer | string) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() }));
    // A spawn failure (ENOENT, EACCES) may never emit 'exit'; it must still end the wait.
    child.once('error', (error) => {
      keep(String(error));
      resolve({ code: -1, signal: null, at: Date.now() });
    });
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const entry: Tracked = {
    name,
    child,
    pid: child.pid,
    exited,
    alive,
    output: () => output,
    async stop() {
      if (alive()) {
        if (stop) await stop();
        else await signalAndWait(child, exited, graceMs);
      }
      await exited;
    },
  };
  running.add(entry);
  void exited.then(() => running.delete(entry));
  return entry;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export async function signalAndWait(
  child: ChildProcess,
  exited: Promise<Exit>,
  graceMs = 5000,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill(signal);
  const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) child.kill('SIGKILL');
  return exited;
}

/** A temp folder removed by `stopAll` (and on exit, as a last resort). */
export function trackTempDir(dir: string): string {
  tempDirs.add(dir);
  return dir;
}

/** Stops everything still registered, newest first (nginx before the instances before PostgreSQL). */
export async function stopAll(): Promise<void> {
  for (const entry of [...running].reverse()) {
    try {
      await entry.stop();
    } catch (error) {
      process.stderr.write(`[fleet] stopping ${entry.name} failed: ${String(error)}\n`);
    }
  }
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Everything still registered, for a last-resort SIGKILL from a synchronous exit handler. */
export function killAllNow(): void {
  for (const entry of running) {
    try {
      entry.child.kill('SIGKILL');
    } catch {
      // Already gone: nothing left to stop.
    }
  }
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
}

/** The kernel's ephemeral port range: what `listen(0)` and outgoing connections use. */
/**
 * The fleet binds its ports again after each restart (an instance, PostgreSQL): ports below the
 * kernel's ephemeral range, which nothing else is handed meanwhile.
 */
export { freePort } from '../../helpers/processes.ts';

/** Live PIDs whose parent is `pid` (Linux /proc): nginx's workers, for reloads and cleanup. */
export function childPids(pid: number | undefined): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // Exited between the listing and the read.
    }
    // Fields after the parenthesised command name: state, then ppid.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === pid && fields[0] !== 'Z') found.push(Number(name));
  }
  return found;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
