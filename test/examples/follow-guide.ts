// Follows a guide page (docs/integrate-*.md) from empty folders, as test/clients/
// integrate-guide.test.ts follows docs/integrate.md: its file blocks must be the example's files
// byte for byte; then `gatehouse/` (this checkout, built, with an empty `data/`) and `my-app/`
// (the example's files) are laid out side by side and the guide's `<!-- run: … -->` commands
// run in order, as written, with these differences (each guide's last section says them):
//
// - every port the guide names (Gatehouse's 3000, the app's, nginx's) becomes a free one, in the
//   commands and in the app's files (not its lockfile); Gatehouse gets it as `PORT`;
// - Gatehouse gets the test's mail catcher as `SMTP_URL` and `MAIL_FROM` (`gatehouseEnv`), as the
//   guides' mail note says, so every mailed link is read from its mail, and what else the test
//   names there (a token signing key and introspection credentials);
// - `npm start` in `gatehouse/` skips its `prestart` build: `dist/` is built already;
// - the install step reuses an earlier run's install of the same package.json and lockfile
//   (hard links from a cache in the temp folder), and runs `npm` only the first time; or, for an
//   example `npm test`'s set-up installs (scripts/test-setup.ts), that install;
// - a second `gatehouse, server` step stops the first one (the guide says to restart it), and a
//   `build` step stops the servers its folder runs (the guide stops the app, then builds it);
// - a test may put a folder first on `PATH` for the app's commands (`appPathFirst`: the Python
//   guide's `python3` with PyJWT).
//
// A guide that changes the app (docs/migrate-from-authjs.md) shows the changed files from a folder
// of their own (`writes`): each such file block is written into `my-app/` where the guide shows it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  network,
  offline,
  serve as serveUntilListening,
  shell,
  stopGroup,
  type Running,
} from '../helpers/guide-steps.js';
import { guideBlocks, type GuideBlock, type RunBlock } from '../helpers/guide.js';
import { freePort } from '../helpers/processes.js';

export const root = path.resolve(import.meta.dirname, '../..');

/** Made by the example's own commands, never part of it (a Next.js app's build and data too). */
const generated =
  /(^|\/)(node_modules|dist|tmp|__pycache__|\.next|data)\/|^\.env(\..*\.local)?$|^next-env\.d\.ts$|\.tsbuildinfo$/;

/** The example's files, relative to its folder, sorted. */
export function exampleFiles(exampleDir: string): string[] {
  return fs
    .readdirSync(exampleDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(exampleDir, path.join(entry.parentPath, entry.name)))
    .filter((file) => !generated.test(file))
    .sort();
}

/** The example's files as a guide names them (`examples/…/<file>`), but `leftOut`, sorted. */
export function examplePaths(exampleDir: string, leftOut: readonly string[] = []): string[] {
  return exampleFiles(path.join(root, exampleDir))
    .filter((file) => !leftOut.includes(file))
    .map((file) => `${exampleDir}/${file}`);
}

/**
 * What a guide shows and marks, for the checks every guide test makes: its blocks, its marked
 * commands (`<folder> <role>`), the files it shows (sorted) and those whose block is not the
 * file's text, byte for byte (`node scripts/build/sync-guide.ts` rewrites them).
 */
export function guideShape(guidePath: string): {
  blocks: GuideBlock[];
  runs: string[];
  shown: string[];
  stale: string[];
} {
  const blocks = guideBlocks(fs.readFileSync(path.join(root, guidePath), 'utf8'));
  const runs = blocks
    .filter((b): b is RunBlock => b.kind === 'run')
    .map((b) => `${b.folder} ${b.role}`);
  const files = blocks.flatMap((b) => (b.kind === 'file' ? [b] : []));
  const stale = files
    .filter((b) => {
      const file = path.join(root, b.path);
      return !fs.existsSync(file) || b.body !== fs.readFileSync(file, 'utf8');
    })
    .map((b) => b.path);
  return { blocks, runs, shown: files.map((b) => b.path).sort(), stale };
}

export interface GuideRun {
  /** The free port standing for a port the guide names. */
  port(guidePort: number): number;
  /** `http://localhost:<port>` for a port the guide names. */
  origin(guidePort: number): string;
  appDir: string;
  gatehouseDir: string;
  /** What each command run so far printed, in the guide's order (servers' output: `output()`). */
  said: string[];
  /** Why the guide could not be followed here for a reason outside it (offline install). */
  unavailable: string;
  /** Runs the next `count` steps, marked commands and files written (all that are left by default). */
  run(count?: number): Promise<void>;
  /** Output of the running servers so far, for a failure's message. */
  output(): string;
  /**
   * Gatehouse again as the guide last started it, with `env` added (SECOND_FACTOR=required, a
   * FACTOR_KEY): what a reader does who turns a setting on after following the guide.
   */
  restartGatehouse(env: NodeJS.ProcessEnv): Promise<void>;
  timings: Record<string, number>;
  stop(): Promise<void>;
}

export interface GuideOptions {
  /** Short name: the temp folders' names. */
  name: string;
  /** docs/… */
  guidePath: string;
  /** examples/… */
  exampleDir: string;
  /** The ports the guide names; the first is Gatehouse's. */
  ports: number[];
  /** The port each `my-app, server` step listens on, in the guide's order. */
  serverPorts: number[];
  /** More of Gatehouse's environment (a mail catcher's `SMTP_URL`, as the guide's note says). */
  gatehouseEnv?: NodeJS.ProcessEnv;
  /**
   * examples/…: the files the guide has the reader change, each written into `my-app/` (at its
   * path below this folder) where the guide shows its block.
   */
  writes?: string;
  /** A folder put first on `PATH` for the app's commands (a `python3` that has what they need). */
  appPathFirst?: string;
}

/** A marked command, or a changed file the guide shows, with where it goes in `my-app/`. */
type Step = RunBlock | { kind: 'write'; to: string; body: string };

/** The guide's steps in its order: every marked command, and the file blocks under `writes`. */
function guideSteps(text: string, writes: string | undefined): Step[] {
  const prefix = writes === undefined ? undefined : `${writes.replace(/\/$/, '')}/`;
  return guideBlocks(text).flatMap((block): Step[] => {
    if (block.kind === 'run') return [block];
    if (prefix === undefined || !block.path.startsWith(prefix)) return [];
    return [{ kind: 'write', to: block.path.slice(prefix.length), body: block.body }];
  });
}

/** node_modules that `npm test`'s set-up installed in the example, else undefined. */
function setUpInstall(exampleDir: string): string | undefined {
  const modules = path.join(exampleDir, 'node_modules');
  return fs.existsSync(path.join(modules, '.gatehouse-install-stamp'))
    ? fs.realpathSync(modules)
    : undefined;
}

/** Where an install of the example's package.json and lock is kept between runs. */
function installCache(name: string, exampleDir: string): string {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) {
    const where = path.join(exampleDir, file);
    hash.update(`${file}\n`).update(fs.existsSync(where) ? fs.readFileSync(where) : 'missing');
  }
  return path.join(
    os.tmpdir(),
    'gatehouse-guide-installs',
    `${name}-${hash.digest('hex').slice(0, 16)}`,
  );
}

/** `my-app/node_modules` as hard links to `modules` (instant; the same lockfile's tree). */
function linkInstall(modules: string, appDir: string): void {
  const linked = spawnSync('cp', ['-al', modules, path.join(appDir, 'node_modules')]);
  if (linked.status !== 0) throw new Error(`cp -al ${modules}: ${String(linked.stderr)}`);
}

/** Keeps the install the guide's command made, for the next run; older locks' go. */
function keepInstall(name: string, exampleDir: string, appDir: string): void {
  const cache = installCache(name, exampleDir);
  const partial = `${cache}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  fs.mkdirSync(partial, { recursive: true });
  const linked = spawnSync('cp', [
    '-al',
    path.join(appDir, 'node_modules'),
    path.join(partial, 'node_modules'),
  ]);
  try {
    if (linked.status === 0) fs.renameSync(partial, cache);
    // Installs of this example's older locks are of no further use.
    const family = path.dirname(cache);
    for (const old of fs.readdirSync(family))
      if (old.startsWith(`${name}-`) && !old.includes('.partial-'))
        if (path.join(family, old) !== cache)
          fs.rmSync(path.join(family, old), { recursive: true, force: true });
  } catch {
    // Another run cached the same install first: that one is kept.
  } finally {
    fs.rmSync(partial, { recursive: true, force: true });
  }
}

/** `gatehouse/` (this checkout, built, with a data folder of its own) and `my-app/` in `work`. */
function layOut(work: string, exampleDir: string, withPorts: (body: string) => string) {
  const gatehouseDir = path.join(work, 'gatehouse');
  fs.mkdirSync(gatehouseDir);
  for (const entry of fs.readdirSync(root))
    if (entry !== 'data' && entry !== '.git')
      fs.symlinkSync(path.join(root, entry), path.join(gatehouseDir, entry));
  // my-app/: the example's files (the guide shows them whole; the lockfile is copied as is).
  const appDir = path.join(work, 'my-app');
  for (const file of exampleFiles(exampleDir)) {
    const from = path.join(exampleDir, file);
    const to = path.join(appDir, file);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    if (file === 'package-lock.json') fs.copyFileSync(from, to);
    else fs.writeFileSync(to, withPorts(fs.readFileSync(from, 'utf8')));
  }
  return { gatehouseDir, appDir };
}

/** A free port for each port the guide names, and a text with those ports replaced. */
async function freePorts(ports: number[]) {
  const mapped = new Map<number, number>();
  for (const port of ports) mapped.set(port, await freePort());
  return {
    port(guidePort: number): number {
      const found = mapped.get(guidePort);
      if (found === undefined) throw new Error(`the guide names no port ${guidePort}`);
      return found;
    },
    withPorts: (body: string) =>
      body.replace(/\b\d{4}\b/g, (found) => String(mapped.get(Number(found)) ?? found)),
  };
}

/** Each folder's environment: Gatehouse's (its port, no `prestart` build) and the app's. */
function folderEnvs(
  gatehouseEnv: NodeJS.ProcessEnv | undefined,
  gatehousePort: number,
  appPathFirst: string | undefined,
): Record<string, NodeJS.ProcessEnv> {
  const base = {
    PATH: [path.dirname(process.execPath), process.env.PATH ?? '', '/usr/sbin'].join(
      path.delimiter,
    ),
    HOME: process.env.HOME ?? os.homedir(),
    npm_config_update_notifier: 'false',
    NEXT_TELEMETRY_DISABLED: '1',
  };
  return {
    gatehouse: {
      ...base,
      ...gatehouseEnv,
      PORT: String(gatehousePort),
      npm_config_ignore_scripts: 'true',
    },
    'my-app': {
      ...base,
      ...network(),
      ...(appPathFirst !== undefined && { PATH: `${appPathFirst}${path.delimiter}${base.PATH}` }),
    },
  };
}

export async function followGuide(options: GuideOptions): Promise<GuideRun> {
  const exampleDir = path.join(root, options.exampleDir);
  const text = fs.readFileSync(path.join(root, options.guidePath), 'utf8');
  const blocks = guideSteps(text, options.writes);
  const { port, withPorts } = await freePorts(options.ports);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-guide-${options.name}-`));
  const { gatehouseDir, appDir } = layOut(work, exampleDir, withPorts);

  const envs = folderEnvs(options.gatehouseEnv, port(options.ports[0]!), options.appPathFirst);
  const dirs: Record<string, string> = { gatehouse: gatehouseDir, 'my-app': appDir };
  const servers: Running[] = [];
  /** The servers each folder runs, for a `build` step to stop first. */
  const serving: Record<string, Running[]> = {};
  const said: string[] = [];
  let gatehouse: Running | undefined;
  /** The command the guide last started Gatehouse with. */
  let gatehouseCommand: string | undefined;
  const serverPorts = [...options.serverPorts];
  const timings: Record<string, number> = {};
  let next = 0;

  async function serve(folder: string, command: string, env: NodeJS.ProcessEnv, at: number) {
    const server = await serveUntilListening(command, dirs[folder]!, env, at);
    servers.push(server);
    (serving[folder] ??= []).push(server);
    return server;
  }

  const result: GuideRun = {
    port,
    origin: (guidePort) => `http://localhost:${port(guidePort)}`,
    appDir,
    gatehouseDir,
    said,
    unavailable: '',
    timings,
    output: () => servers.map((s) => s.output()).join('\n---\n'),
    async restartGatehouse(env) {
      if (gatehouse === undefined || gatehouseCommand === undefined)
        throw new Error('the guide has not started Gatehouse yet');
      await stopGroup(gatehouse);
      const withEnv = { ...envs.gatehouse, ...env };
      gatehouse = await serve('gatehouse', gatehouseCommand, withEnv, port(options.ports[0]!));
    },
    async run(count = blocks.length - next) {
      for (const block of blocks.slice(next, next + count)) {
        next += 1;
        const started = Date.now();
        if (block.kind === 'write') {
          const to = path.join(appDir, block.to);
          fs.mkdirSync(path.dirname(to), { recursive: true });
          fs.writeFileSync(to, withPorts(block.body));
          continue;
        }
        const label = `${block.folder}: ${block.body.trim()}`;
        const cwd = dirs[block.folder];
        const env = envs[block.folder];
        if (!cwd || !env) throw new Error(`the guide runs in an unknown folder: ${label}`);
        const command = withPorts(block.body);
        if (block.role === 'install') {
          const modules =
            setUpInstall(exampleDir) ??
            path.join(installCache(options.name, exampleDir), 'node_modules');
          if (fs.existsSync(modules)) {
            linkInstall(modules, appDir);
            timings['install (cached)'] = Date.now() - started;
            continue;
          }
        }
        if (block.role === 'server') {
          if (block.folder === 'gatehouse') {
            if (gatehouse) await stopGroup(gatehouse);
            gatehouse = await serve(block.folder, command, env, port(options.ports[0]!));
            gatehouseCommand = command;
          } else {
            const at = serverPorts.shift();
            if (at === undefined) throw new Error(`no port given for the server ${label}`);
            await serve(block.folder, command, env, port(at));
          }
          timings[label] = Date.now() - started;
          continue;
        }
        if (block.role === 'build')
          for (const server of serving[block.folder]?.splice(0) ?? []) await stopGroup(server);
        const step = shell(command, cwd, env);
        await step.exited;
        said.push(step.output());
        if (step.child.exitCode !== 0) {
          if (block.role === 'install' && offline.test(step.output())) {
            result.unavailable = `the example's packages could not be installed (offline?): ${label}`;
            return;
          }
          throw new Error(`${label} exited ${step.child.exitCode}:\n${step.output()}`);
        }
        if (block.role === 'install') keepInstall(options.name, exampleDir, appDir);
        timings[label] = Date.now() - started;
      }
    },
    async stop() {
      for (const server of servers.reverse()) await stopGroup(server);
      fs.rmSync(work, { recursive: true, force: true });
    },
  };
  return result;
}
