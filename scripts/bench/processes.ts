// Everything the bench starts: children tracked so an error, Ctrl-C or the watchdog never
// leaves a server holding a port or a CPU; temp folders; free ports; CPU pinning; and a server
// spawned and timed to its first 200 from /api/health.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BenchError, describeError, now, root, sleep, type Env } from './common.ts';
import { probe } from './http.ts';
import { onPath } from './machine.ts';

/** How a tracked child ended; `error` when it could not be spawned at all. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/** A child process the bench will stop on every exit path; `exited` settles when it ends. */
export type Tracked<T extends ChildProcess = ChildProcess> = T & { exited: Promise<Exit> };

/** A server started and answering: its process, where it listens, and how long it took. */
export interface Server {
  label: string;
  child: Tracked;
  pid: number;
  base: string;
  startupMs: number;
  /** The last few kB the server printed, for error messages. */
  output: () => string;
}

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
const cleanupHooks: (() => unknown)[] = [];

/** Where the runner pinned things: servers on `serverCpu`, wrk and the client on `loadCpu`. */
export const setup: { taskset: boolean; loadCpu?: number; serverCpu?: number } = {
  taskset: onPath('taskset'),
  loadCpu: undefined,
  serverCpu: undefined,
};

export function track<T extends ChildProcess>(child: T): Tracked<T> {
  children.add(child);
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn failure (ENOENT, EACCES) may never emit 'exit'; it must still end the wait.
    child.once('error', (error) => resolve({ code: -1, signal: null, error }));
  });
  void exited.then(() => children.delete(child));
  return Object.assign(child, { exited });
}

export async function stopChild(child: Tracked, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const done = await Promise.race([
    child.exited.then(() => true),
    sleep(graceMs).then(() => false),
  ]);
  if (!done) {
    child.kill('SIGKILL');
    await Promise.race([child.exited, sleep(1000)]);
  }
}

/** Async work for `cleanup()` once the children are stopped (a database to drop). */
export function onCleanup(hook: () => unknown): void {
  cleanupHooks.push(hook);
}

export async function cleanup(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child as Tracked)));
  for (const hook of cleanupHooks.splice(0)) {
    try {
      await hook();
    } catch (error) {
      process.stderr.write(
        `bench: cleanup: ${(error as { message?: string } | null)?.message ?? String(error)}\n`,
      );
    }
  }
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

let exiting = false;
export async function bail(code: number, message?: string): Promise<void> {
  if (exiting) return;
  exiting = true;
  if (message) process.stderr.write(`\nbench: ${message}\n`);
  await cleanup();
  process.exit(code);
}

/** For the runner: a signal, a stray exception or process.exit still stops what was started. */
export function installCleanupHandlers(): void {
  process.on('exit', () => {
    // Last resort for paths that skipped the async cleanup (process.exit from elsewhere).
    for (const child of children) child.kill('SIGKILL');
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  process.on('SIGINT', () => void bail(130, 'interrupted; stopped everything it started'));
  process.on('uncaughtException', (error) => void bail(1, describeError(error)));
  process.on('unhandledRejection', (error) => void bail(1, describeError(error)));
  process.on('SIGTERM', () => void bail(143, 'terminated; stopped everything it started'));
}

export function makeTemp(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function pinned(
  cpu: number | undefined,
  command: string,
  args: string[],
): [string, string[]] {
  return cpu === undefined ? [command, args] : ['taskset', ['-c', String(cpu), command, ...args]];
}

export function childEnv(extra: Env): NodeJS.ProcessEnv {
  // A clean environment: a stray WORKERS or HASH_CONCURRENCY in the caller's shell must not
  // silently change what is being measured.
  return { PATH: process.env.PATH, HOME: process.env.HOME ?? os.tmpdir(), ...extra };
}

export const startupPollMs = 5;
const startupTimeoutMs = 20_000;

/**
 * Spawns `node …nodeArgs` with `childEnv(env)` and times spawn → first 200 from /api/health,
 * polled every 5 ms. Pinned to `cpu` (default: the runner's server CPU; null: not pinned). The
 * server's output is kept for error messages unless `stdio` says where it goes.
 */
export async function startServer(
  label: string,
  nodeArgs: string[],
  env: Env,
  { cpu = setup.serverCpu, stdio }: { cpu?: number | null; stdio?: StdioOptions } = {},
): Promise<Server> {
  const port = Number(env.PORT);
  const base = `http://127.0.0.1:${port}`;
  const [command, args] = pinned(cpu ?? undefined, process.execPath, nodeArgs);
  let output = '';
  const t0 = now();
  const child = track(
    spawn(command, args, {
      cwd: root,
      env: childEnv(env),
      stdio: stdio ?? ['ignore', 'pipe', 'pipe'],
    }),
  );
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  const deadline = t0 + startupTimeoutMs;
  for (;;) {
    const attempt = now();
    if (exited) throw new BenchError(`${label} exited during start-up:\n${output}`);
    if ((await probe(`${base}/api/health`, 500)) === 200) {
      const pid = child.pid as number;
      return { label, child, pid, base, startupMs: now() - t0, output: () => output };
    }
    if (now() > deadline) {
      await stopChild(child);
      throw new BenchError(`${label} did not answer /api/health within 20 s:\n${output}`);
    }
    await sleep(Math.max(0, startupPollMs - (now() - attempt)));
  }
}
