import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from './processes.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
/**
 * The example app's install (examples/nextjs/, put there by `npm test`'s set-up,
 * scripts/test-setup.ts): the one Next.js, next-auth and React the fixtures build against.
 * Gatehouse's own package does not depend on them.
 */
export const nextModules = path.join(repoRoot, 'examples/nextjs/node_modules');
const nextBin = path.join(nextModules, 'next/dist/bin/next');
// Under that node_modules/.cache: outside git, Prettier and ESLint (which does not read
// .gitignore and would lint `.tmp/`), and below examples/nextjs/node_modules, where a build in
// it resolves `next`, `next-auth` and `react` by walking up.
const cacheRoot = path.join(nextModules, '.cache/gatehouse-next-apps');

/** Why the Next.js fixtures cannot run, or '' when examples/nextjs/ is installed. */
export function nextMissing(): string {
  return fs.existsSync(nextBin)
    ? ''
    : 'next not installed in examples/nextjs/ (run `npm run test:setup`)';
}

function versionOf(pkg: string): string {
  const manifest = path.join(nextModules, pkg, 'package.json');
  return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version;
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** Runs `next` in `cwd` to the end; rejects with its output when it fails. */
function runNext(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [nextBin, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME, NEXT_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`next ${args.join(' ')} exited ${code}:\n${output}`));
    });
  });
}

export interface BuiltNextApp {
  dir: string;
  /** False when an earlier run's build was reused. */
  built: boolean;
}

/**
 * `next build` of the Next.js app in `fixtureDir`, in a copy under examples/nextjs/node_modules/.cache keyed by
 * its sources and the versions of next, next-auth and React, so the second run of the suite
 * (fast paths off) reuses the first one's build. Next writes only inside that copy (telemetry is
 * off); older builds of the same fixture are removed.
 */
export async function buildNextApp(fixtureDir: string): Promise<BuiltNextApp> {
  const hash = createHash('sha256');
  for (const pkg of ['next', 'next-auth', 'react', 'react-dom'])
    hash.update(`${pkg}@${versionOf(pkg)}\n`);
  for (const file of filesUnder(fixtureDir)) {
    hash.update(`${file}\n`).update(fs.readFileSync(path.join(fixtureDir, file)));
  }
  const family = path.join(cacheRoot, path.basename(fixtureDir));
  const dir = path.join(family, hash.digest('hex').slice(0, 16));
  const complete = path.join(dir, '.build-complete');
  if (fs.existsSync(complete)) return { dir, built: false };
  fs.mkdirSync(family, { recursive: true });
  for (const old of fs.readdirSync(family)) fs.rmSync(path.join(family, old), { recursive: true });
  fs.cpSync(fixtureDir, dir, { recursive: true });
  await runNext(['build'], dir);
  fs.writeFileSync(complete, new Date().toISOString());
  return { dir, built: true };
}

/** `next start` of a built app on 127.0.0.1:`port` with exactly `env` (plus PATH). */
export function startNextApp(
  dir: string,
  port: number,
  env: Record<string, string>,
): Promise<ServerProcess> {
  return startServerProcess(
    process.execPath,
    [nextBin, 'start', '--hostname', '127.0.0.1', '--port', String(port)],
    {
      port,
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', NEXT_TELEMETRY_DISABLED: '1', ...env },
      timeoutMs: 30_000,
    },
  );
}
