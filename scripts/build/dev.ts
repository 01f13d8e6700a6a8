// `npm run dev`: builds the server's bundles into dist/ (as the build does, without the type
// check and the code-cache warm-up: esbuild alone, well under a second), runs the service exactly
// as `npm start` does, and on every change under src/ rebuilds and restarts it: SIGTERM, wait for
// the drain to exit (SIGKILL after 10 s), then a new process on the same port. A build that fails
// prints esbuild's errors and leaves the last good build running; the next change tries again.
// Type errors are not checked here (`npm run typecheck`, or the editor).
//
// dist/ then holds a development build, so the stamp is removed and the next `npm start` or
// `npm run users` makes a full build (scripts/build/ensure-built.ts). Ctrl-C stops the service,
// then the loop.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, formatMessages, type BuildContext, type Message } from 'esbuild';
import { bundleOptions, copyWorker } from './bundle-options.ts';
import { stampName } from './inputs.ts';
import { startArgs } from './start-command.ts';

const root = path.dirname(fileURLToPath(new URL('../../package.json', import.meta.url)));
const src = path.join(root, 'src');
const say = (line: string) => process.stderr.write(`dev: ${line}\n`);

fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
fs.rmSync(path.join(root, 'dist', stampName), { force: true });

const bundles = bundleOptions(root);
// The server and its runner restart the service; the CLI is kept current for `node
// dist/gatehouse-cli.cjs` beside it. Errors are printed once, here, not by esbuild too.
const contexts: BuildContext[] = await Promise.all(
  [bundles.server, bundles.runner, bundles.cli].map((options) =>
    context({ ...options, logLevel: 'silent' }),
  ),
);

let service: ChildProcess | undefined;
let exited: Promise<void> = Promise.resolve();
let stopping = false;

function start(): void {
  const child = spawn(process.execPath, startArgs(root), { cwd: root, stdio: 'inherit' });
  service = child;
  exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      if (service === child) {
        service = undefined;
        if (!stopping)
          say(`the service exited (${signal ?? `code ${code}`}); waiting for a change`);
      }
      resolve();
    }),
  );
  say(`service started (pid ${child.pid})`);
}

/** SIGTERM, then wait for the drain to exit; SIGKILL if it takes longer than 10 s. */
async function stop(): Promise<void> {
  const child = service;
  if (child === undefined) return;
  service = undefined;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Rebuilds every bundle; true when all succeeded (errors printed). */
async function rebuild(): Promise<boolean> {
  const results = await Promise.allSettled(contexts.map((c) => c.rebuild()));
  const failures = results.filter((r) => r.status === 'rejected');
  if (failures.length === 0) {
    copyWorker(root);
    return true;
  }
  const seen = new Set<string>();
  for (const failure of failures) {
    const errors = (failure.reason as { errors?: Message[] }).errors;
    const text = errors
      ? (await formatMessages(errors, { kind: 'error', color: process.stderr.isTTY })).join('')
      : `${String(failure.reason)}\n`;
    if (!seen.has(text)) process.stderr.write(text);
    seen.add(text);
  }
  return false;
}

/** One build-and-restart at a time; changes during it queue exactly one more. */
let running = false;
let queued: string | undefined;
async function cycle(reason: string): Promise<void> {
  if (running) {
    queued = reason;
    return;
  }
  running = true;
  try {
    let next: string | undefined = reason;
    while (next !== undefined && !stopping) {
      queued = undefined;
      const started = Date.now();
      const ok = await rebuild();
      const took = `${Date.now() - started} ms`;
      if (!ok) {
        say(
          `${next}: build failed (${took}); ` +
            (service
              ? `the last good build keeps running (pid ${service.pid})`
              : 'waiting for a change'),
        );
      } else if (!stopping) {
        say(`${next}: built in ${took}; ${service ? 'restarting' : 'starting'} the service`);
        await stop();
        if (!stopping) start();
      }
      next = queued;
    }
  } finally {
    running = false;
  }
}

// fs.watch names the file that changed; a burst (an editor's save, a checkout) becomes one build.
let timer: NodeJS.Timeout | undefined;
let changed = new Set<string>();
const watcher = fs.watch(src, { recursive: true }, (_event, file) => {
  if (file) changed.add(path.join('src', file));
  clearTimeout(timer);
  timer = setTimeout(() => {
    const files = [...changed];
    changed = new Set();
    const reason =
      files.length === 0
        ? 'src/ changed'
        : `${files[0]} changed${files.length > 1 ? ` (and ${files.length - 1} more)` : ''}`;
    void cycle(reason);
  }, 100);
});

async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping`);
  watcher.close();
  clearTimeout(timer);
  await stop();
  await Promise.all(contexts.map((c) => c.dispose()));
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

say('watching src/ (Ctrl-C to stop)');
await cycle('first build');
