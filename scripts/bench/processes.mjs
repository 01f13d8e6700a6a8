// Everything the bench starts: children tracked so an error, Ctrl-C or the watchdog never
// leaves a server holding a port or a CPU; temp folders; free ports; CPU pinning; and a server
// spawned and timed to its first 200 from /api/health.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BenchError, now, root, sleep } from './common.mjs';
import { probe } from './http.mjs';
import { onPath } from './machine.mjs';

const children = new Set();
const tempDirs = new Set();
const cleanupHooks = [];

/** Where the runner pinned things: servers on `serverCpu`, wrk and the client on `loadCpu`. */
export const setup = {
  taskset: onPath('taskset'),
  loadCpu: undefined,
  serverCpu: undefined,
};

export function track(child) {
  children.add(child);
  child.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn failure (ENOENT, EACCES) may never emit 'exit'; it must still end the wait.
    child.once('error', (error) => resolve({ code: -1, signal: null, error }));
  });
  child.exited.then(() => children.delete(child));
  return child;
}

export async function stopChild(child, graceMs = 3000) {
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
export function onCleanup(hook) {
  cleanupHooks.push(hook);
}

export async function cleanup() {
  await Promise.all([...children].map((child) => stopChild(child)));
  for (const hook of cleanupHooks.splice(0)) {
    try {
      await hook();
    } catch (error) {
      process.stderr.write(`bench: cleanup: ${error?.message ?? error}\n`);
    }
  }
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

let exiting = false;
export async function bail(code, message) {
  if (exiting) return;
  exiting = true;
  if (message) process.stderr.write(`\nbench: ${message}\n`);
  await cleanup();
  process.exit(code);
}

/** For the runner: a signal, a stray exception or process.exit still stops what was started. */
export function installCleanupHandlers() {
  process.on('exit', () => {
    // Last resort for paths that skipped the async cleanup (process.exit from elsewhere).
    for (const child of children) child.kill('SIGKILL');
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  process.on('SIGINT', () => bail(130, 'interrupted; stopped everything it started'));
  process.on('uncaughtException', (error) => bail(1, error?.stack ?? String(error)));
  process.on('unhandledRejection', (error) => bail(1, error?.stack ?? String(error)));
  process.on('SIGTERM', () => bail(143, 'terminated; stopped everything it started'));
}

export function makeTemp(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export function pinned(cpu, command, args) {
  return cpu === undefined ? [command, args] : ['taskset', ['-c', String(cpu), command, ...args]];
}

export function childEnv(extra) {
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
export async function startServer(label, nodeArgs, env, { cpu = setup.serverCpu, stdio } = {}) {
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
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.exited.then(() => {
    exited = true;
  });
  const deadline = t0 + startupTimeoutMs;
  for (;;) {
    const attempt = now();
    if (exited) throw new BenchError(`${label} exited during start-up:\n${output}`);
    if ((await probe(`${base}/api/health`, 500)) === 200) {
      return { label, child, pid: child.pid, base, startupMs: now() - t0, output: () => output };
    }
    if (now() > deadline) {
      await stopChild(child);
      throw new BenchError(`${label} did not answer /api/health within 20 s:\n${output}`);
    }
    await sleep(Math.max(0, startupPollMs - (now() - attempt)));
  }
}
