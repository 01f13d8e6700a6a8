// Files the service finds rather than makes: an existing database open to group or others is
// warned about (refused in production), and a development secret that someone else could have
// written is refused. Run as root too: the checks read mode bits and owners, which root's
// bypass of permission checks does not change.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';
import { distDir, runNode } from '../helpers/spawn.js';

const production = {
  NODE_ENV: 'production',
  AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
  AUTH_URL: 'https://auth.example',
  HOST: '127.0.0.1',
};
const devSecret = 'dev-secret-of-forty-four-characters-00000000';

/** Starts the built service, waits for its first 200 from /api/health, stops it with SIGTERM. */
async function startAndStop(env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let exited = false;
  const code = new Promise<number | null>((resolve) =>
    child.on('close', (status) => {
      exited = true;
      resolve(status);
    }),
  );
  let healthy = false;
  // A deadline, not a count of tries: a start on a loaded machine may take many seconds.
  for (const deadline = Date.now() + 30_000; !exited && !healthy && Date.now() < deadline;) {
    try {
      healthy = (await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200;
    } catch {
      // Not listening yet: poll again.
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  child.kill('SIGTERM');
  return { healthy, code: await code, stderr };
}

let dir: string;
let count = 0;
/** A fresh data folder (0700) for one case. */
const dataDir = () => {
  const folder = path.join(dir, `case-${(count += 1)}`);
  fs.mkdirSync(folder, { mode: 0o700 });
  return folder;
};
const touch = (file: string, mode: number, content = '') => {
  fs.writeFileSync(file, content);
  fs.chmodSync(file, mode);
};

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-modes-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('an existing SQLite database open to group or others', () => {
  it.each([
    ['gatehouse.db', 0o644, '0644'],
    ['gatehouse.db', 0o640, '0640'],
    ['gatehouse.db-wal', 0o604, '0604'],
    ['gatehouse.db-shm', 0o660, '0660'],
  ])(
    'in production %s at mode %o refuses to start, naming the file and the fix',
    async (name, mode, shown) => {
      const data = dataDir();
      touch(path.join(data, 'gatehouse.db'), 0o600);
      touch(path.join(data, name), mode);
      const file = path.join(data, name);
      const result = await runNode('gatehouse.mjs', [], { ...production, DATA_DIR: data });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `gatehouse: failed to start: database file ${file} is open to group or others (mode ${shown}); fix: chmod 600 ${file} (refused in production)\n`,
      );
    },
  );

  it('in development starts and warns, naming the file and the fix', async () => {
    const data = dataDir();
    const file = path.join(data, 'gatehouse.db');
    touch(file, 0o644);
    const result = await startAndStop({ DATA_DIR: data, AUTH_SECRET: production.AUTH_SECRET });
    expect(result.healthy).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      `gatehouse: warning: database file ${file} is open to group or others (mode 0644); fix: chmod 600 ${file}\n`,
    );
  });

  it('a database at 0600 starts in production without a word', async () => {
    const data = dataDir();
    touch(path.join(data, 'gatehouse.db'), 0o600);
    const result = await startAndStop({ ...production, DATA_DIR: data });
    expect(result.healthy).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });
});

describe('an existing development secret', () => {
  const refusal = (file: string, why: string) =>
    `gatehouse: failed to start: development secret ${file} ${why}; refused: remove it (a new one is made) or set AUTH_SECRET\n`;

  it.each([
    [0o666, 'is writable by group or others (mode 0666): it could have been planted'],
    [0o620, 'is writable by group or others (mode 0620): it could have been planted'],
    [0o602, 'is writable by group or others (mode 0602): it could have been planted'],
  ])('at mode %o is refused', async (mode, why) => {
    const data = dataDir();
    const file = path.join(data, 'auth-secret');
    touch(file, mode, `${devSecret}\n`);
    const result = await runNode('gatehouse.mjs', [], { DATA_DIR: data });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(refusal(file, why));
    expect(fs.readFileSync(file, 'utf8')).toBe(`${devSecret}\n`);
  });

  it('as a symbolic link is refused, not followed', async () => {
    const data = dataDir();
    const target = path.join(data, 'elsewhere');
    touch(target, 0o600, `${devSecret}\n`);
    const file = path.join(data, 'auth-secret');
    fs.symlinkSync(target, file);
    const result = await runNode('gatehouse.mjs', [], { DATA_DIR: data });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(refusal(file, 'is a symbolic link'));
  });

  // Only root can give a file to another user.
  it.runIf(process.getuid?.() === 0)('owned by another user is refused', async () => {
    const data = dataDir();
    const file = path.join(data, 'auth-secret');
    touch(file, 0o600, `${devSecret}\n`);
    fs.chownSync(file, 4242, 4242);
    const result = await runNode('gatehouse.mjs', [], { DATA_DIR: data });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      refusal(file, 'is owned by uid 4242, not by this user (uid 0): it could have been planted'),
    );
  });

  it('readable by group or others is used, with a warning naming the fix', async () => {
    const data = dataDir();
    const file = path.join(data, 'auth-secret');
    touch(file, 0o644, `${devSecret}\n`);
    const result = await startAndStop({ DATA_DIR: data });
    expect(result.healthy).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `gatehouse: warning: development secret ${file} is readable by group or others (mode 0644); fix: chmod 600 ${file}\n`,
    );
    expect(result.stderr).toContain('using the development secret');
    expect(fs.readFileSync(file, 'utf8')).toBe(`${devSecret}\n`);
  });
});
