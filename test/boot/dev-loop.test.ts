import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';

// `npm run dev` (scripts/build/dev.ts) in a throw-away copy of the sources, so the test edits
// files without touching the repository: it starts and serves /api/health, a changed source
// file is rebuilt and the new process answers, a broken edit leaves the last good build
// answering, and the fix restarts it. The version /api/health reports is what the edits change
// (src/health/version.ts), so each answer names the build that gave it.

const repoRoot = path.resolve(import.meta.dirname, '../..');
const versionFile = 'src/health/version.ts';
const fastPaths = process.env.GATEHOUSE_TEST_FAST_PATHS === 'off' ? 'off' : 'on';

describe('npm run dev', () => {
  let dir: string;
  let url: string;
  let dev: ChildProcess;
  let output = '';
  let original: string;

  /** The source file with readPackageVersion answering `version` (or broken when undefined). */
  function editVersion(version: string | undefined): void {
    const opening = 'export function readPackageVersion(packageJsonUrl: URL): string {';
    expect(original).toContain(opening);
    const edited =
      version === undefined
        ? `${original}\nexport const broken = ;\n`
        : original.replace(opening, `${opening}\n  if (packageJsonUrl) return '${version}';`);
    fs.writeFileSync(path.join(dir, versionFile), edited);
  }

  /** Polls /api/health until its version is `version` (any answer when undefined). */
  async function waitForVersion(version: string | undefined, ms = 30_000): Promise<string> {
    const deadline = Date.now() + ms;
    let last = 'no answer';
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`${url}/api/health`);
        const body = (await response.json()) as { version: string };
        last = `${response.status} ${body.version}`;
        if (response.status === 200 && (version === undefined || body.version === version)) {
          return body.version;
        }
      } catch {
        // Between processes: poll again.
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(
      `no /api/health with version ${version} in ${ms} ms (last: ${last})\n${output}`,
    );
  }

  /** Waits until the dev loop's output has `count` matches of `pattern`. */
  async function waitForOutput(pattern: RegExp, count = 1, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    const global = new RegExp(pattern.source, 'g');
    while ((output.match(global)?.length ?? 0) < count) {
      if (Date.now() > deadline) throw new Error(`no ${pattern} ×${count} in ${ms} ms:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const pids = () => [...output.matchAll(/service started \(pid (\d+)\)/g)].map((m) => m[1]);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-dev-'));
    for (const entry of [
      'src',
      'scripts/build',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
    ]) {
      fs.cpSync(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
    }
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
    original = fs.readFileSync(path.join(dir, versionFile), 'utf8');
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    dev = spawn(process.execPath, [path.join(dir, 'scripts/build/dev.ts')], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: path.join(dir, 'data'),
        LOG_LEVEL: 'warn',
        FAST_PATHS: fastPaths,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    dev.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  }, 30_000);

  afterAll(async () => {
    if (dev && dev.exitCode === null) {
      const exited = new Promise((resolve) => dev.once('exit', resolve));
      dev.kill('SIGTERM');
      await exited;
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('builds, starts the service and serves /api/health', async () => {
    expect(await waitForVersion(undefined)).toBe('0.1.0');
    expect(output).toMatch(/dev: first build: built in \d+ ms; starting the service/);
    expect(pids()).toHaveLength(1);
  }, 40_000);

  it('rebuilds after a source file changes and the new process answers', async () => {
    editVersion('edited-once');
    expect(await waitForVersion('edited-once')).toBe('edited-once');
    expect(output).toMatch(/dev: src\/health\/version\.ts changed: built in \d+ ms; restarting/);
    const [first, second] = pids();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    // The old process drained and exited before the new one started: it is gone.
    expect(() => process.kill(Number(first), 0)).toThrow();
  }, 40_000);

  it('keeps the last good build running when a build fails, and restarts on the fix', async () => {
    const started = pids().length;
    editVersion(undefined);
    await waitForOutput(/build failed \(\d+ ms\); the last good build keeps running/);
    expect(output).toContain('Unexpected ";"');
    expect(output).toMatch(/src\/health\/version\.ts:\d+:\d+:/);
    // The last good build still answers (a generous wait only for a loaded machine's reply:
    // a failed build starts nothing, so no other version can come).
    expect(await waitForVersion('edited-once', 10_000)).toBe('edited-once');
    expect(pids()).toHaveLength(started);

    editVersion('edited-twice');
    expect(await waitForVersion('edited-twice')).toBe('edited-twice');
    expect(pids()).toHaveLength(started + 1);
  }, 40_000);

  it('stops the service and itself on SIGTERM', async () => {
    const last = Number(pids().at(-1));
    const exited = new Promise<number | null>((resolve) => dev.once('exit', resolve));
    dev.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(() => process.kill(last, 0)).toThrow();
  }, 20_000);
});
